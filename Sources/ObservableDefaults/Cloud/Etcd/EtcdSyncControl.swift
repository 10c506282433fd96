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
    /// The sync thread is in ``waitForWake(timeout:)``: woken, it starts a round at once.
    private var waiting = false
    /// The sync thread took a local-copy save from ``wakeTakingSave()`` and has not done it yet.
    private var saveTaken = false

    var isStopped: Bool { condition.withLock { stopped } }

    /// Whether the sync thread is waiting out a back-off now.
    var isSleeping: Bool { condition.withLock { sleeping } }

    func stop() {
        changeAndBroadcast { stopped = true }
    }

    func wake() {
        changeAndBroadcast { wakeRequested = true }
    }

    /// Runs `change` under the lock, then wakes every waiter once the lock is released: woken while it is
    /// still held, the sync thread would block on it at once, a second context switch on the write's path.
    private func changeAndBroadcast<Result>(_ change: () -> Result) -> Result {
        condition.lock()
        let result = change()
        condition.unlock()
        condition.broadcast()
        return result
    }

    /// Wakes the sync thread for a new write and, when it is waiting for work, hands it the write's save
    /// of the local copy too (returns true): it saves once its round's first request is sent, or before
    /// connecting (``EtcdSync/saveTakenWrite()``), so a write wakes one thread instead of two (a second wake-up on two cores costs the
    /// upload more than the save itself does). Otherwise only wakes it, and the caller saves as usual.
    /// `cuttingBackOff` also ends a back-off under way, as ``wakeNow()`` does, in the same wake-up.
    func wakeTakingSave(cuttingBackOff: Bool = false) -> Bool {
        changeAndBroadcast {
            wakeRequested = true
            if cuttingBackOff, sleeping { backOffCut = true }
            guard waiting, !stopped else { return false }
            saveTaken = true
            return true
        }
    }

    /// Whether a save was handed over by ``wakeTakingSave()`` and not done yet; the caller does it now.
    func takeSave() -> Bool {
        condition.withLock {
            defer { saveTaken = false }
            return saveTaken
        }
    }

    /// Waits until woken, stopped, or `timeout` passed; returns whether it was woken.
    @discardableResult
    func waitForWake(timeout: TimeInterval) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            waiting = true
            defer { waiting = false }
            while !wakeRequested, !stopped, watchEnds.isEmpty, condition.wait(until: deadline) {}
            defer { wakeRequested = false }
            return wakeRequested || !watchEnds.isEmpty
        }
    }

    /// Like ``wake()``, and also ends a back-off under way: the next attempt starts at once (a write of
    /// an object with `syncImmediately: true`). Never blocks.
    func wakeNow() {
        changeAndBroadcast {
            wakeRequested = true
            if sleeping { backOffCut = true }
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
        changeAndBroadcast { watchEnds.append(end) }
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
        changeAndBroadcast {
            if outcome == .succeeded {
                succeededRound = max(succeededRound, round)
            } else {
                refusedRound = max(refusedRound, round)
            }
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
