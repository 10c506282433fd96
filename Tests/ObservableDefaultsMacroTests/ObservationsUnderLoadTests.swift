@testable import ObservableDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// Threads that keep every core busy until stopped, so the watcher thread, the writer and the task that
/// iterates `Observations` are preempted at arbitrary points.
final class BusyThreads: Sendable {
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Int>(0)
    private let count: Int

    init(count: Int = max(4, ProcessInfo.processInfo.activeProcessorCount * 2)) {
        self.count = count
        for _ in 0..<count {
            Thread.detachNewThread { [self] in
                var x: UInt64 = 1
                while running.load(ordering: .relaxed) { x = x &* 6364136223846793005 &+ 1 }
                if x == 0 { print("") }  // keeps the loop from being optimized away
                finished.add(1, ordering: .relaxed)
            }
        }
    }

    /// Stops the threads and waits until they have ended.
    func stop() async {
        running.store(false, ordering: .relaxed)
        _ = await eventually { finished.load(ordering: .relaxed) == count }
    }
}

/// The README's `Observations` example must always deliver the latest value, whichever thread applies the
/// change and however the threads are scheduled.
@Suite(.serialized) struct ObservationsUnderLoadTests {
    static let writes = 150
    // Each case runs in three rounds: without the fix, a single round missed the latest value about half the time.

    /// Iterates `Observations` until `last` arrives (bounded); returns whether it did.
    static func latestArrives(
        _ values: Observations<Int, Never>, last: Int, while write: @escaping @Sendable () async -> Void
    ) async -> Bool {
        let seen = Mutex(Int.min)
        let consumer = Task {
            for await value in values {
                seen.withLock { $0 = value }
                if value == last { return }
            }
        }
        let busy = BusyThreads()
        await write()
        let arrived = await eventually(timeout: .seconds(30)) { seen.withLock { $0 } == last }
        await busy.stop()
        consumer.cancel()
        return arrived
    }

    @Test(arguments: 1...3) func nonIsolatedClassOutsideWrites(round: Int) async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let arrived = await Self.latestArrives(Observations { model.a }, last: Self.writes) {
            for value in 1...Self.writes { writeOutside(suite, ["m_a": .integer(value)]) }
        }
        #expect(arrived, "the latest value never arrived; the object reads \(model.a)")
    }

    @Test(arguments: 1...3) func nonIsolatedClassWritesFromOtherThreads(round: Int) async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let arrived = await Self.latestArrives(Observations { model.a }, last: Self.writes) {
            await Task.detached {
                for value in 1...Self.writes { suite.set(.integer(value), forKey: "m_a") }
            }.value
        }
        #expect(arrived, "the latest value never arrived; the object reads \(model.a)")
    }

    @MainActor @Test(arguments: 1...3) func mainActorClassOutsideWrites(round: Int) async throws {
        let suite = try makeSuite()
        let model = MainActorModel(userDefaults: suite)
        let arrived = await Self.latestArrives(Observations { model.value }, last: Self.writes) {
            for value in 1...Self.writes { writeOutside(suite, ["value": .integer(value)]) }
        }
        #expect(arrived, "the latest value never arrived; the object reads \(model.value)")
    }
}
