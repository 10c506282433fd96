import Synchronization

/// A value behind a lock, for the generated code's per-property copies.
///
/// Implementation detail of the macros; not API.
@usableFromInline
struct _DefaultsUnchecked<Wrapped>: @unchecked Sendable {
    @usableFromInline var wrapped: Wrapped
    @inlinable init(wrapped: Wrapped) { self.wrapped = wrapped }
}

/// A lock-protected variable: a `Mutex` around a value of any type (the type's own `Sendable`-ness is
/// checked where the containing slot or box is declared `Sendable`).
///
/// The accessors are inlinable so the generated code's reads specialize for the property's type.
@usableFromInline
final class _DefaultsLocked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: Mutex<_DefaultsUnchecked<Value>>

    @usableFromInline init(_ value: Value) { mutex = Mutex(_DefaultsUnchecked(wrapped: value)) }

    @inlinable
    var value: Value {
        get { mutex.withLock { $0.wrapped } }
        set { mutex.withLock { $0.wrapped = newValue } }
    }

    @inlinable
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { state in
            _DefaultsUnchecked(wrapped: body(&state.wrapped))
        }.wrapped
    }
}
