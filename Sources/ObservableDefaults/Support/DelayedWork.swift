import Dispatch
import Foundation

/// Runs work after a delay: what a suite's retries and re-reads are scheduled with
/// (``DelayedWork/shared`` in production).
package protocol DelayScheduler: Sendable {
    /// Runs `work` on `queue` once `delay` has passed.
    func after(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}

/// Runs work after a delay without Dispatch's timers: one thread of the process sleeps until the earliest
/// deadline, then hands the work to a Dispatch queue (`async`, which needs no descriptor).
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
        var queue: DispatchQueue
        var work: @Sendable () -> Void
    }

    // Guards `items` and `running`; `wait(until:)` is `pthread_cond_timedwait`, no descriptor.
    private let condition = NSCondition()
    private var items: [Item] = []
    private var running = false

    /// Runs `work` on `queue` once `delay` has passed.
    func after(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        condition.lock()
        items.append(Item(deadline: .now + delay, queue: queue, work: work))
        let start = !running
        running = true
        condition.signal()
        condition.unlock()
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
                for item in due { item.queue.async(execute: item.work) }
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
