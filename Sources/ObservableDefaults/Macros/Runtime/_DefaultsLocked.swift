import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A lock-protected variable for the generated code's per-property copies, whose reads are on the hot path
/// of every property read.
///
/// The lock costs one atomic exchange to take and a plain releasing store to give back (a `Mutex` costs two
/// atomic read-modify-writes: its unlock must learn whether to wake a waiter). It can be that cheap because
/// no one ever waits long: the value is only copied, compared or replaced under it, never with a call out
/// to other code (short of the release of a replaced value). A thread that finds it taken spins briefly,
/// then yields, then sleeps in short naps, so a holder that was preempted gets the processor back. Its
/// atomics are compiled into this module, where ThreadSanitizer sees them.
///
/// The accessors are inlinable so the generated code's reads specialize for the property's type.
/// Implementation detail of the macros; not API.
@usableFromInline
final class _DefaultsLocked<Value>: @unchecked Sendable {
    @usableFromInline let isLocked = Atomic<Bool>(false)
    /// Out of line (not a stored `var`), so access needs no dynamic exclusivity check: the lock is what
    /// makes it exclusive.
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    @usableFromInline init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inlinable
    var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock, and must
    /// not call out to code that could wait for something (see the type's comment).
    @inlinable
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        if isLocked.exchange(true, ordering: .acquiring) { waitForLock() }
        defer { isLocked.store(false, ordering: .releasing) }
        return try body(&storage.pointee)
    }

    /// The slow path of ``withLock(_:)``: another thread holds the lock. Returns holding it.
    @usableFromInline
    func waitForLock() {
        var attempts = 0
        repeat {
            // Read-only until it looks free, so waiting threads do not keep stealing the cache line.
            while isLocked.load(ordering: .relaxed) {
                attempts += 1
                if attempts < 64 {
                    continue
                } else if attempts < 128 {
                    sched_yield()
                } else {
                    var nap = timespec(tv_sec: 0, tv_nsec: 50_000)
                    nanosleep(&nap, nil)
                }
            }
        } while isLocked.exchange(true, ordering: .acquiring)
    }
}
