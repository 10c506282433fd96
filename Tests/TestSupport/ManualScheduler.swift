import Dispatch
import ObservableDefaults
import Synchronization

/// A ``DelayScheduler`` whose time passes only when a test says so: it records each delay asked for and
/// runs the waiting work when the test calls ``fire()``, so a test proves a retry and its backoff without
/// waiting for either.
package final class ManualScheduler: DelayScheduler, Sendable {
    private let waiting = Mutex<[@Sendable () -> Void]>([])
    private let asked = Mutex<[Duration]>([])

    package init() {}

    /// Every delay asked for so far, in order.
    package var delays: [Duration] { asked.withLock { $0 } }

    /// How many pieces of work wait for ``fire()``.
    package var waitingCount: Int { waiting.withLock { $0.count } }

    /// Keeps `work` until ``fire()``, whatever `delay` is (it is recorded in ``delays``).
    package func after(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        asked.withLock { $0.append(delay) }
        waiting.withLock { $0.append(work) }
    }

    /// Runs the work waiting now, in the order it was scheduled, on the calling thread (not on the queue it
    /// was scheduled for: the test sees its effects when this returns). Work scheduled meanwhile waits for the
    /// next call. Returns how many ran.
    @discardableResult
    package func fire() -> Int {
        let due = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
        for work in due { work() }
        return due.count
    }
}
