import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A condition variable, shaped like `NSCondition` (`lock`, `unlock`, `wait`, `wait(until:)`, `broadcast`),
/// whose mutex may be shared with other conditions (``init(sharingLockWith:)``): one lock guards a
/// connection's state while each waiter waits on the condition of what it waits for, so that a DATA frame
/// for one stream wakes that stream's reader only, not every thread blocked on the connection.
///
/// Timed waits count on `CLOCK_MONOTONIC`: a change of the wall clock neither cuts them short nor stretches
/// them.
final class HTTP2Condition: @unchecked Sendable {  // the pthread objects are what synchronise
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let variable: UnsafeMutablePointer<pthread_cond_t>
    /// The condition whose mutex this one uses (kept alive while this one is); `nil`: the mutex is its own.
    private let owner: HTTP2Condition?

    /// A condition with a mutex of its own.
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed (\(result))")
        owner = nil
        variable = Self.makeVariable()
    }

    /// A condition waited on under `other`'s mutex (that is, under `other.lock()`).
    init(sharingLockWith other: HTTP2Condition) {
        mutex = other.mutex
        owner = other.owner ?? other
        variable = Self.makeVariable()
    }

    private static func makeVariable() -> UnsafeMutablePointer<pthread_cond_t> {
        let variable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        variable.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let result = pthread_cond_init(variable, &attributes)
        pthread_condattr_destroy(&attributes)
        precondition(result == 0, "pthread_cond_init failed (\(result))")
        return variable
    }

    deinit {
        _ = pthread_cond_destroy(variable)
        variable.deallocate()
        if owner == nil {
            _ = pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }
    }

    /// Takes the (shared) mutex.
    func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed (\(result))")
    }

    /// Releases the (shared) mutex.
    func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock failed (\(result))")
    }

    /// Waits (holding the mutex) until woken.
    func wait() {
        _ = pthread_cond_wait(variable, mutex)
    }

    /// Waits (holding the mutex) until woken or `limit` passed; false when it passed.
    @discardableResult
    func wait(until limit: Date) -> Bool {
        let seconds = max(0, min(limit.timeIntervalSinceNow, 1e9))
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let whole = Int(seconds)
        var nanoseconds = now.tv_nsec + Int((seconds - Double(whole)) * 1e9)
        var end = timespec(tv_sec: now.tv_sec + whole, tv_nsec: 0)
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            end.tv_sec += 1
        }
        end.tv_nsec = nanoseconds
        return pthread_cond_timedwait(variable, mutex, &end) != ETIMEDOUT
    }

    /// Wakes every thread waiting on this condition (not those waiting on others sharing its mutex).
    func broadcast() {
        _ = pthread_cond_broadcast(variable)
    }

    /// Wakes one thread waiting on this condition.
    func signal() {
        _ = pthread_cond_signal(variable)
    }
}

/// The conditions a reader thread is to wake for what it handled, woken together once it has handled what
/// one read brought (or before it lends itself to consumers): a unary call's answer — head, message and
/// trailers, which etcd writes at once — wakes its caller once, and the caller finds the lock free instead
/// of blocking on it while the reader handles the next frame.
struct HTTP2Wakes {
    private var conditions: [HTTP2Condition] = []

    /// Adds `condition` (once, however often it is added).
    mutating func add(_ condition: HTTP2Condition?) {
        guard let condition, !conditions.contains(where: { $0 === condition }) else { return }
        conditions.append(condition)
    }

    /// Wakes every condition added since the last call.
    mutating func wake() {
        guard !conditions.isEmpty else { return }
        for condition in conditions { condition.broadcast() }
        conditions.removeAll(keepingCapacity: true)
    }
}
