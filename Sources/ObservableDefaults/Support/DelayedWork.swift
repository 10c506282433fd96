import Dispatch
import Foundation

/// Runs work after a delay: what a suite's retries and re-reads are scheduled with
/// (``DelayedWork/shared`` in production).
package protocol DelayScheduler: Sendable {
    /// Runs `work` on `queue` once `delay` has passed.
    func after(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}

/// Runs work after a delay without Dispatch's timers: one thread of the process sleeps until the earliest
/// deadline, then hands the work to a Dispatch queue (`async`, which needs no descriptor), or runs it itself
/// when it is a short check that never blocks (``afterOnOwnThread(_:_:)``).
///
/// Dispatch's `asyncAfter` needs an epoll instance and a timerfd, which Dispatch opens lazily, at the
/// first timer. In a process whose descriptors ran out before that (the very case the retries after a
/// transient failure are for), Dispatch then stops the process (`epoll_create1`: `EMFILE`) or drops the
/// timer without a word (`timerfd_create`), and the retry never comes. A thread and a condition variable
/// need no descriptor.
final class DelayedWork: DelayScheduler, @unchecked Sendable {
    /// The process's one scheduler.
    static let shared = DelayedWork()

    private struct Item {
        var deadline: ContinuousClock.Instant
        /// Where the work runs; `nil`: on the scheduler's own thread.
        var queue: DispatchQueue?
        var work: @Sendable () -> Void
    }

    // Guards `items` and `running`; `wait(until:)` is `pthread_cond_timedwait`, no descriptor.
    private let condition = NSCondition()
    private var items: [Item] = []
    private var running = false

    /// Runs `work` on `queue` once `delay` has passed.
    func after(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        schedule(delay, on: queue, work)
    }

    /// Runs `work` on the scheduler's own thread once `delay` has passed, sparing the wake-up of a Dispatch
    /// thread: for a short check that never blocks and takes no lock held while scheduling (it would hold up
    /// every later piece of work, or wait for itself).
    func afterOnOwnThread(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
        schedule(delay, on: nil, work)
    }

    private func schedule(_ delay: Duration, on queue: DispatchQueue?, _ work: @escaping @Sendable () -> Void) {
        let deadline = ContinuousClock.now + delay
        condition.lock()
        // The thread sleeps until the earliest deadline it knows (or for good): only an earlier one needs it
        // woken, which spares a thread's wake-up for work armed behind other work (the HTTP/2 reader's relief
        // check, say).
        let earliest = items.allSatisfy { deadline < $0.deadline }
        items.append(Item(deadline: deadline, queue: queue, work: work))
        let start = !running
        running = true
        condition.unlock()
        // Signalled after the lock is released, so the woken thread does not wait for the lock at once.
        if earliest { condition.signal() }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "ObservableDefaults.DelayedWork"
            thread.start()
        }
    }

    private func run() {
        condition.lock()
        while true {
            let now = ContinuousClock.now
            let due = items.filter { $0.deadline <= now }
            items.removeAll { $0.deadline <= now }
            if !due.isEmpty {
                condition.unlock()
                for item in due {
                    if let queue = item.queue { queue.async(execute: item.work) } else { item.work() }
                }
                condition.lock()
                continue
            }
            if let next = items.map(\.deadline).min() {
                _ = condition.wait(until: Date().addingTimeInterval(now.duration(to: next).timeInterval))
            } else {
                condition.wait()
            }
        }
    }
}
