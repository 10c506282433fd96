import Dispatch
import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// `DelayedWork`, the thread that runs retries and relief checks after their delay: work armed before work
/// already waiting runs on time, work armed behind it waits its turn without holding up the earlier one.
@Suite struct DelayedWorkTests {
    /// When each piece of work ran, by name.
    final class Runs: Sendable {
        private let times = Mutex<[String: ContinuousClock.Instant]>([:])
        func record(_ name: String) { times.withLock { $0[name] = .now } }
        func time(_ name: String) -> ContinuousClock.Instant? { times.withLock { $0[name] } }
    }

    @Test func workArmedBeforeWorkAlreadyWaitingRunsOnTime() {
        let work = DelayedWork(), runs = Runs()
        work.after(.seconds(30), on: .global()) { runs.record("late") }
        work.after(.milliseconds(10), on: .global()) { runs.record("warm") }
        #expect(eventually(timeout: .seconds(5)) { runs.time("warm") != nil })
        // The thread has run the warm-up and sleeps until the late work's deadline; the early work must wake
        // it. (The pause only makes sure it is asleep by then, so that a missing wake-up shows; had it not
        // gone back to sleep yet, it would find the early work itself, and the test would pass either way.)
        usleep(20_000)
        let start = ContinuousClock.now
        work.after(.milliseconds(20), on: .global()) { runs.record("early") }
        #expect(eventually(timeout: .seconds(5)) { runs.time("early") != nil })
        if let early = runs.time("early") {
            #expect(early - start >= .milliseconds(20), "ran before its delay")
        }
        #expect(runs.time("late") == nil)
    }

    @Test func workArmedBehindWorkAlreadyWaitingRunsAfterItAndInItsOrder() {
        let work = DelayedWork(), runs = Runs(), start = ContinuousClock.now
        // One serial queue: the work runs in the order the scheduler hands it over, its deadlines' order.
        let queue = DispatchQueue(label: "DelayedWorkTests")
        work.after(.milliseconds(50), on: queue) { runs.record("first") }
        work.after(.milliseconds(150), on: queue) { runs.record("second") }
        work.after(.milliseconds(100), on: queue) { runs.record("between") }
        #expect(eventually(timeout: .seconds(5)) { runs.time("second") != nil })
        let first = runs.time("first"), between = runs.time("between"), second = runs.time("second")
        #expect(first != nil && between != nil)
        if let first, let between, let second {
            #expect(first - start >= .milliseconds(50))
            #expect(between - start >= .milliseconds(100))
            #expect(second - start >= .milliseconds(150))
            #expect(first <= between && between <= second, "ran out of deadline order")
        }
    }

    @Test func workOnItsOwnThreadRunsAfterItsDelayBesideQueuedWork() {
        let work = DelayedWork(), runs = Runs(), start = ContinuousClock.now
        let schedulerThread = Mutex<ObjectIdentifier?>(nil)
        work.after(.milliseconds(60), on: .global()) { runs.record("queued") }
        work.afterOnOwnThread(.milliseconds(30)) {
            schedulerThread.withLock { $0 = ObjectIdentifier(Thread.current) }
            runs.record("own")
        }
        #expect(eventually(timeout: .seconds(5)) { runs.time("queued") != nil && runs.time("own") != nil })
        if let own = runs.time("own"), let queued = runs.time("queued") {
            #expect(own - start >= .milliseconds(30) && queued - start >= .milliseconds(60))
        }
        #expect(schedulerThread.withLock { $0 } != nil)
    }
}
