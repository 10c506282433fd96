import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A store's deliveries to its observers and error handlers: run one at a time, in the order they were
/// added, never while the store's lock is held.
///
/// Deliveries are added under the store's lock (so their order is the order of the changes) and run by
/// whichever thread delivers at the moment: the delivery queue, or a thread that found a change and
/// delivers it itself when nothing is being delivered (``add(deliveredByCaller:_:)``), saving a hand-off
/// between threads on the watch's path. Whoever delivers also runs everything added meanwhile, so a later
/// delivery never overtakes an earlier one.
final class CloudDeliveries: Sendable {
    private struct Outbox {
        var waiting: [@Sendable () -> Void] = []
        /// The thread running deliveries now, if any.
        var deliverer: pthread_t?
        /// A run on the delivery queue is on its way.
        var scheduled = false
    }

    private let outbox = Locked(Outbox())
    /// How many times a thread that found a change delivered it itself.
    let runByCallers = Locked(0)
    private let queue = DispatchQueue(label: "ObservableDefaults.CloudKeyValueStore.delivery")

    /// Adds `delivery` behind every earlier one. With `deliveredByCaller`, the caller promises to call
    /// ``deliverWaiting()`` once it has released its locks; otherwise the delivery queue runs it (unless
    /// some thread is delivering now: that one takes it).
    func add(deliveredByCaller: Bool = false, _ delivery: @escaping @Sendable () -> Void) {
        let schedule = outbox.withLock { outbox -> Bool in
            outbox.waiting.append(delivery)
            guard !deliveredByCaller, outbox.deliverer == nil, !outbox.scheduled else { return false }
            outbox.scheduled = true
            return true
        }
        if schedule { queue.async { [self] in deliverWaiting(scheduled: true) } }
    }

    /// Runs the waiting deliveries on this thread, unless another thread is delivering (it runs them).
    func deliverWaiting() { deliverWaiting(scheduled: false) }

    private func deliverWaiting(scheduled: Bool) {
        let me = pthread_self()
        var batch = outbox.withLock { outbox -> [@Sendable () -> Void] in
            if scheduled { outbox.scheduled = false }
            guard outbox.deliverer == nil, !outbox.waiting.isEmpty else { return [] }
            outbox.deliverer = me
            defer { outbox.waiting = [] }
            return outbox.waiting
        }
        if !scheduled, !batch.isEmpty { runByCallers.withLock { $0 += 1 } }
        while !batch.isEmpty {
            for delivery in batch { delivery() }
            batch = outbox.withLock { outbox in
                if outbox.waiting.isEmpty { outbox.deliverer = nil }
                defer { outbox.waiting = [] }
                return outbox.waiting
            }
        }
    }

    /// Waits until every delivery added so far has run. Called from a delivery (an observer that
    /// synchronizes), it returns at once: the deliveries before it have run, the rest wait for it.
    func waitForAll() {
        let me = pthread_self()
        let delivering = outbox.withLock { outbox in outbox.deliverer.map { pthread_equal($0, me) != 0 } ?? false }
        guard !delivering else { return }
        let done = DispatchSemaphore(value: 0)
        add { done.signal() }
        done.wait()
    }
}
