#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a `pthread_mutex_t`: the library's lock for shared state.
///
/// Used instead of `Synchronization.Mutex`, whose Linux implementation locks with atomics and `futex`
/// calls inside the prebuilt standard library, where ThreadSanitizer cannot see them: every access made
/// under such a lock is reported as a race, which drowns real ones. ThreadSanitizer intercepts
/// `pthread_mutex_lock`, so state guarded here is checked for real. The cost is the same (an uncontended
/// lock is one atomic operation in either).
///
/// A function (or an Optional of one) must not be the value itself: use ``LockedCallback``, which says why.
final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Out of line (not a stored `var`), so access needs no dynamic exclusivity check: the mutex is
    /// what makes it exclusive.
    private let value: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed (\(result))")
    }

    deinit {
        // Fails only for a mutex still locked, which no one can hold once the value is released.
        _ = pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        // These fail only for a mutex that is not initialised or not held: a bug here, not a condition
        // to recover from.
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed (\(locked))")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed (\(unlocked))")
        }
        return try body(&value.pointee)
    }
}

// The value is only reached under the lock, so sharing the lock is safe when the value may cross threads.
extension Locked: @unchecked Sendable where Value: Sendable {}
