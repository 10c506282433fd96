#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a lock, for the generated code's per-property copies.
///
/// Implementation detail of the macros; not API.
@usableFromInline
struct _DefaultsUnchecked<Wrapped>: @unchecked Sendable {
    @usableFromInline var wrapped: Wrapped
    @inlinable init(wrapped: Wrapped) { self.wrapped = wrapped }
}

/// A lock-protected variable: a `pthread_mutex_t` around a value of any type (the type's own
/// `Sendable`-ness is checked where the containing slot or box is declared `Sendable`).
///
/// The same lock as ``Locked`` (see there why not `Synchronization.Mutex`; not importing that module also
/// saves a clean build rebuilding its interface for the index store), kept separate because the generated
/// code's reads inline it: the accessors are inlinable so they specialize for the property's type.
@usableFromInline
struct _DefaultsLocked<Value>: @unchecked Sendable {
    @usableFromInline let storage: _DefaultsLockStorage<Value>

    @usableFromInline init(_ value: Value) {
        storage = unsafeDowncast(_DefaultsLockStorage<Value>.create(minimumCapacity: 1) { _ in value },
                                 to: _DefaultsLockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed (\(result))")
        }
    }

    @inlinable
    var value: Value {
        get { withLock { $0 } }
        nonmutating set { withLock { $0 = newValue } }
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    @inlinable
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        storage.withUnsafeMutablePointers { value, mutex in
            // These fail only for a mutex that is not initialised or not held: a bug, not a condition.
            let locked = pthread_mutex_lock(mutex)
            precondition(locked == 0, "pthread_mutex_lock failed (\(locked))")
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                precondition(unlocked == 0, "pthread_mutex_unlock failed (\(unlocked))")
            }
            return body(&value.pointee)
        }
    }
}

/// The storage of a ``_DefaultsLocked``: the value is the buffer's header and the mutex its one element, so
/// a lock and its value are one allocation. The buffer destroys the header itself.
@usableFromInline
final class _DefaultsLockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            // Fails only for a mutex still locked, which no one can hold once the storage is released.
            _ = pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
