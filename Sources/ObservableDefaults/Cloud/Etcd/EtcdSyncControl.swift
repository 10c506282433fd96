import Foundation

/// How the sync thread and its callers meet: wake-ups (a new write, `synchronize()`, a watch that
/// ended), rounds that `synchronize()` waits for, and stopping.
final class EtcdSyncControl: @unchecked Sendable {
    // Every stored property is guarded by `condition`.
    private let condition = NSCondition()
    private var wakeRequested = false
    /// The sync thread is waiting out a back-off (``sleep(_:)``), and whether ``wakeNow()`` ended it.
    private var sleeping = false
    private var backOffCut = false
    private var stopped = false
    private var requestedRound = 0
    private var succeededRound = 0
    private var watchEnds: [EtcdWatchStream.End] = []

    var isStopped: Bool { condition.withLock { stopped } }

    /// Whether the sync thread is waiting out a back-off now (for tests).
    var isSleepingForTest: Bool { condition.withLock { sleeping } }

    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    func wake() {
        condition.withLock {
            wakeRequested = true
            condition.broadcast()
        }
    }

    /// Waits until woken, stopped, or `timeout` passed; returns whether it was woken.
    @discardableResult
    func waitForWake(timeout: TimeInterval) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !wakeRequested, !stopped, watchEnds.isEmpty, condition.wait(until: deadline) {}
            defer { wakeRequested = false }
            return wakeRequested || !watchEnds.isEmpty
        }
    }

    /// Like ``wake()``, and also ends a back-off under way: the next attempt starts at once (a write of
    /// an object with `syncImmediately: true`). Never blocks.
    func wakeNow() {
        condition.withLock {
            wakeRequested = true
            if sleeping { backOffCut = true }
            condition.broadcast()
        }
    }

    /// Sleeps `interval` unless stopped first (a back-off that ``wake()`` does not cut short; ``wakeNow()``
    /// does).
    func sleep(_ interval: TimeInterval) {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: interval)
            sleeping = true
            defer { sleeping = false; backOffCut = false }
            while !stopped, !backOffCut, condition.wait(until: deadline) {}
        }
    }

    func watchEnded(_ end: EtcdWatchStream.End) {
        condition.withLock {
            watchEnds.append(end)
            condition.broadcast()
        }
    }

    func takeWatchEnds() -> [EtcdWatchStream.End] {
        condition.withLock {
            defer { watchEnds.removeAll() }
            return watchEnds
        }
    }

    /// The number of the round the sync thread starts now (covering every request made before it).
    func beginRound() -> Int { condition.withLock { requestedRound } }

    func completeRound(_ round: Int, succeeded: Bool) {
        guard succeeded else { return }
        condition.withLock {
            succeededRound = max(succeededRound, round)
            condition.broadcast()
        }
    }

    /// Asks for a new round and waits (at most `timeout`) until one that began after the request
    /// succeeds; returns whether one did.
    func requestRound(timeout: TimeInterval) -> Bool {
        condition.withLock {
            requestedRound += 1
            let target = requestedRound
            wakeRequested = true
            condition.broadcast()
            let deadline = Date(timeIntervalSinceNow: timeout)
            while succeededRound < target, !stopped, condition.wait(until: deadline) {}
            return succeededRound >= target
        }
    }
}
