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
    /// The newest round in which every member refused the connection (or had no route, or turned down the
    /// TLS handshake): a definite "no".
    private var refusedRound = -1
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

    /// Sleeps `interval` after the failed round `failed` unless stopped first (a back-off that ``wake()``
    /// does not cut short; ``wakeNow()`` does, and so does a round requested after `failed` began: a
    /// waiting ``requestRound(timeout:)`` gets a fresh attempt at once, once).
    func sleep(_ interval: TimeInterval, after failed: Int) {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: interval)
            sleeping = true
            defer { sleeping = false; backOffCut = false }
            while !stopped, !backOffCut, requestedRound <= failed, condition.wait(until: deadline) {}
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

    /// How a round ended.
    enum RoundOutcome {
        case succeeded
        /// Failed in a way a later attempt may not (a timeout, no leader, a refused request).
        case failed
        /// Every member refused the connection, had no route to it, or turned down the TLS handshake.
        case refused
    }

    func completeRound(_ round: Int, _ outcome: RoundOutcome) {
        guard outcome != .failed else { return }
        condition.withLock {
            if outcome == .succeeded { succeededRound = max(succeededRound, round) } else { refusedRound = max(refusedRound, round) }
            condition.broadcast()
        }
    }

    /// Asks for a new round and waits (at most `timeout`) until one that began after the request
    /// succeeds — returns true — or found every member refusing connections — returns false at once
    /// (slow or failed answers are waited for until the timeout).
    func requestRound(timeout: TimeInterval) -> Bool {
        condition.withLock {
            requestedRound += 1
            let target = requestedRound
            wakeRequested = true
            condition.broadcast()
            let deadline = Date(timeIntervalSinceNow: timeout)
            while succeededRound < target, refusedRound < target, !stopped, condition.wait(until: deadline) {}
            return succeededRound >= target
        }
    }
}
