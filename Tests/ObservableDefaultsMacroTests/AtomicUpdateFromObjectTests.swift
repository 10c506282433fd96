@testable import ObservableDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// Prefix and custom key (stored as `u.launches`), Optionals with and without a default, a `Double` (NaN
/// cannot be stored in JSON) and an observable-only property.
@ObservableDefaults(prefix: "u.")
final class UpdateCounters: Sendable {
    @Ignore let log = EventLog()
    @DefaultsKey(userDefaultsKey: "launches") var count = 0 {
        willSet { log.append("willSet \(count)->\(newValue)") }
        didSet { log.append("didSet \(oldValue)->\(count)") }
    }
    var name: String? = nil
    var limit: Int? = 25
    var ratio = 1.0
    var level: LogLevel = .system
    @ObservableOnly var transient = 0
}

/// Hears only this process: its suite's file is not watched.
@ObservableDefaults(limitToInstance: true)
final class UnwatchedCounter: Sendable {
    var value = 0
}

@ObservableDefaults(ignoreExternalChanges: true)
final class QuietCounter: Sendable {
    var value = 0
}

/// The class the `increment-object` agent uses, seen from this process.
@ObservableDefaults(prefix: "agent.")
final class ProcessCounter: Sendable {
    @DefaultsKey(userDefaultsKey: "count") var total = 0
}

@MainActor
@ObservableDefaults(prefix: "ui.")
final class MainActorCounter {
    var value: Int = 0 {
        didSet { onMainQueue.append(DispatchQueue.getSpecific(key: mainQueueKey) == true) }
    }
    @ObservableOnly var onMainQueue: [Bool] = []
}

/// Counts every Observation notification of what `read` accesses: tracking is armed again in each change
/// handler (Observation calls a handler once, then forgets it), so a second notification is counted too.
final class MutationCounter: Sendable {
    /// The notifications counted, and the last tracking that fired (each arming has its own number).
    private let state = Mutex((count: 0, armed: 0, fired: 0))
    private let read: @Sendable () -> Void

    init(_ read: @escaping @Sendable () -> Void) {
        self.read = read
        arm()
    }

    var count: Int { state.withLock { $0.count } }

    /// Tracks `read` once more. Two threads announcing at once can both run one tracking's `onChange`
    /// (Observation cancels it after collecting it): only the first call counts and re-arms, else the
    /// trackings would double with every such race.
    private func arm() {
        let number = state.withLock { state in
            state.armed += 1
            return state.armed
        }
        withObservationTracking(read) { [self] in
            let first = state.withLock { state in
                guard number > state.fired else { return false }
                state.fired = number
                state.count += 1
                return true
            }
            if first { arm() }
        }
    }
}

/// `update(_:_:)` of an `@ObservableDefaults` object: an atomic read-modify-write of one property.
@Suite struct AtomicUpdateFromObjectTests {
    func counters(_ model: UpdateCounters) -> [String: MutationCounter] {
        [
            "count": MutationCounter { _ = model.count }, "name": MutationCounter { _ = model.name },
            "limit": MutationCounter { _ = model.limit }, "ratio": MutationCounter { _ = model.ratio },
            "level": MutationCounter { _ = model.level }, "transient": MutationCounter { _ = model.transient }
        ]
    }

    func notifications(_ counters: [String: MutationCounter]) -> [String: Int] {
        counters.mapValues(\.count).filter { $0.value != 0 }
    }

    @Test func eachChangingUpdateIsToldOnceAndOnlyForItsProperty() async throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        let other = UpdateCounters(userDefaults: suite)
        let marker = OutsideMarker(suite)
        let observed = counters(model), otherObserved = counters(other)
        for expected in 1...3 {
            #expect(try model.update(\.count) { $0 + 1 } == expected)
            #expect(model.count == expected)
        }
        #expect(try model.update(\.count) { $0 } == 3)  // no change: nobody is told
        // The store's announcements of these writes and the watcher's reading of the file have all arrived.
        #expect(await marker.settle())
        #expect(notifications(observed) == ["count": 3])
        #expect(
            model.log.events == [
                "willSet 0->1", "didSet 0->1", "willSet 1->2", "didSet 1->2", "willSet 2->3", "didSet 2->3"
            ])
        // Another object on the suite hears them as changes made elsewhere.
        #expect(other.count == 3)
        #expect(notifications(otherObserved) == ["count": 3])
        #expect(try contentsOnDisk(suite.fileURL)["u.launches"] == .integer(3))
    }

    @Test func theInitializersPrefixIsUsed() throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite, prefix: "p2.")
        #expect(try model.update(\.count) { $0 + 2 } == 2)
        #expect(try contentsOnDisk(suite.fileURL) == ["p2.launches": .integer(2)])
    }

    @Test func theTransformGetsWhatTheFileHoldsNow() throws {
        let suite = try makeSuite()
        // Not watching the file: only the update's read under the lock can see the other process's write.
        let model = UnwatchedCounter(userDefaults: suite)
        model.value = 1
        let status = try runAgent(["set", suite.fileURL.path, "value", "int:10"])
        #expect(status == 0)
        let flag = MutationCounter { _ = model.value }
        let seen = Mutex<[Int]>([])
        let stored = try model.update(\.value) { current in
            seen.withLock { $0.append(current) }
            return current + 1
        }
        #expect(seen.withLock { $0 } == [10])
        #expect(stored == 11)
        #expect(model.value == 11)
        #expect(flag.count == 1)
        #expect(try contentsOnDisk(suite.fileURL)["value"] == .integer(11))
    }

    @Test func anAbsentKeyGivesTheRegisteredThenTheDeclarationDefault() throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        suite.register(defaults: ["u.launches": 7])
        let seen = Mutex<[String]>([])
        try model.update(\.count) { current in
            seen.withLock { $0.append("count \(current)") }
            return current + 1
        }
        try model.update(\.limit) { current in
            seen.withLock { $0.append("limit \(String(describing: current))") }
            return current.map { $0 + 1 }
        }
        #expect(seen.withLock { $0 } == ["count 7", "limit Optional(25)"])
        #expect(model.count == 8 && model.limit == 26)
        #expect(try contentsOnDisk(suite.fileURL) == ["u.launches": .integer(8), "u.limit": .integer(26)])
    }

    @Test func nilRemovesTheKeyAndThePropertyReadsItsDefault() async throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        model.limit = 3
        model.name = "x"
        let marker = OutsideMarker(suite)
        let observed = counters(model)
        #expect(try model.update(\.limit) { _ in nil } == nil)
        #expect(model.limit == 25)
        #expect(try model.update(\.name) { _ in nil } == nil)
        #expect(model.name == nil)
        #expect(try contentsOnDisk(suite.fileURL).isEmpty)
        #expect(try model.update(\.name) { ($0 ?? "") + "a" } == "a")
        #expect(model.name == "a")
        #expect(await marker.settle())
        #expect(notifications(observed) == ["limit": 1, "name": 2])
        #expect(try contentsOnDisk(suite.fileURL).filter { $0.key != marker.key } == ["u.name": .string("a")])
    }

    @Test func ownUpdatesAreToldWhenOutsideChangesAreIgnored() async throws {
        let suite = try makeSuite()
        let model = QuietCounter(userDefaults: suite)
        let marker = OutsideMarker(suite)
        let observed = MutationCounter { _ = model.value }
        #expect(try model.update(\.value) { $0 + 1 } == 1)
        #expect(await marker.settle())
        #expect(observed.count == 1)
        #expect(model.value == 1)
    }

    @Test func aStoredValueOfAnotherTypeIsRefusedNamingKeyAndValue() async throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        model.count = 4
        let marker = OutsideMarker(suite)
        writeOutside(suite, ["u.launches": .string("many")])
        let observed = counters(model)
        let ran = Mutex(false)
        let error = #expect(throws: DefaultsError.self) {
            try model.update(\.count) { current in
                ran.withLock { $0 = true }
                return current + 1
            }
        }
        #expect(error?.kind == .wrongType)
        #expect(error?.key == "u.launches")
        #expect(error?.fileURL == suite.fileURL)
        #expect(error?.message.contains(#""many" is not an Int"#) == true, "\(String(describing: error))")
        #expect(!ran.withLock { $0 })
        #expect(await marker.settle())
        #expect(try contentsOnDisk(suite.fileURL)["u.launches"] == .string("many"))
        #expect(model.count == 4)  // the last good value, as for any value of the wrong type
        #expect(notifications(observed).isEmpty)
    }

    @Test func aFailingTransformOrAnUnstorableValueChangesNothing() async throws {
        struct Refused: Error {}
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        model.count = 5
        let marker = OutsideMarker(suite)
        let observed = counters(model)
        #expect(throws: Refused.self) { try model.update(\.count) { _ in throw Refused() } }
        let error = #expect(throws: DefaultsError.self) { try model.update(\.ratio) { _ in .nan } }
        #expect(error?.kind == .unsupportedValue)
        #expect(error?.key == "u.ratio")
        #expect(model.count == 5 && model.ratio == 1.0)
        #expect(await marker.settle())
        #expect(notifications(observed).isEmpty)
        #expect(try contentsOnDisk(suite.fileURL)["u.launches"] == .integer(5))
        #expect(try contentsOnDisk(suite.fileURL)["u.ratio"] == nil)
    }

    @Test func aPropertyThatIsNotStoredIsRefused() throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        let error = #expect(throws: DefaultsError.self) { try model.update(\.transient) { $0 + 1 } }
        #expect(
            error?.message.contains("is not a persisted property of UpdateCounters") == true,
            "\(String(describing: error))")
        #expect(model.transient == 0)
    }

    @Test func threadsUpdatingOneObjectLoseNothing() async throws {
        let suite = try makeSuite()
        let model = UpdateCounters(userDefaults: suite)
        let other = UpdateCounters(userDefaults: suite)
        let observed = MutationCounter { _ = model.count }
        let threads = 8, increments = 40
        let failures = Mutex<[String]>([])
        let returned = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                do {
                    let stored = try model.update(\.count) { $0 + 1 }
                    returned.withLock { $0.append(stored) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        let total = threads * increments
        #expect(failures.withLock { $0 } == [])
        // Each update saw the one before it: the values stored are 1…total, each once.
        #expect(returned.withLock { $0.sorted() } == Array(1...total))
        // The thread telling observers about overlapping updates has finished: the property is the total.
        #expect(model.count == total)
        #expect(try contentsOnDisk(suite.fileURL)["u.launches"] == .integer(total))
        #expect(await eventually { other.count == total })
        // Changes that overlap may be told together, but every one told is a change, in order.
        let events = model.log.events
        #expect((1...total).contains(observed.count))
        #expect(events.count == 2 * observed.count)
        #expect(events.last?.hasPrefix("didSet ") == true && events.last?.hasSuffix("->\(total)") == true)
    }

    @Test func eightProcessesIncrementingThroughObjectsLoseNothing() async throws {
        let suite = try makeSuite()
        suite.lockWaitLimit = .seconds(60)
        let model = ProcessCounter(userDefaults: suite)
        let processes = 8, increments = 50
        let children = try (0..<processes).map { _ in
            try startAgent(["increment-object", suite.fileURL.path, String(increments)])
        }
        // This process increments through its own object at the same time.
        for _ in 0..<increments { try model.update(\.total) { $0 + 1 } }
        for child in children {
            child.waitUntilExit()
            #expect(child.terminationStatus == 0)
        }
        let total = (processes + 1) * increments
        #expect(try contentsOnDisk(suite.fileURL) == ["agent.count": .integer(total)])
        #expect(await eventually { model.total == total })
    }

    @MainActor @Test func aMainActorObjectUpdatesOnTheMainActor() async throws {
        let suite = try makeSuite()
        let model = MainActorCounter(userDefaults: suite)
        let marker = OutsideMarker(suite)
        let flag = track { _ = model.value }
        #expect(try model.update(\.value) { $0 + 1 } == 1)
        #expect(model.value == 1)
        #expect(flag.fired)
        #expect(await marker.settle())
        #expect(model.onMainQueue == [true])
        #expect(try contentsOnDisk(suite.fileURL)["ui.value"] == .integer(1))
    }

    func startAgent(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = CrossProcessTests.agent
        process.arguments = arguments
        try process.run()
        return process
    }

    func runAgent(_ arguments: [String]) throws -> Int32 {
        let process = try startAgent(arguments)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Decodes the suite file as it is on disk now.
func contentsOnDisk(_ url: URL) throws -> [String: DefaultsValue] {
    try SuiteFormat.json.decode(Data(contentsOf: url), fileURL: url).stringKeyed
}
