import Synchronization

/// A value behind a lock, for the generated code's per-property copies.
///
/// Implementation detail of the macros; not API.
struct _DefaultsUnchecked<Wrapped>: @unchecked Sendable {
    var wrapped: Wrapped
}

/// A lock-protected variable: a `Mutex` around a value of any type (the type's own `Sendable`-ness is
/// checked where the containing slot or box is declared `Sendable`).
final class _DefaultsLocked<Value>: @unchecked Sendable {
    private let mutex: Mutex<_DefaultsUnchecked<Value>>

    init(_ value: Value) { mutex = Mutex(_DefaultsUnchecked(wrapped: value)) }

    @inline(__always)
    var value: Value {
        get { mutex.withLock { $0 }.wrapped }
        set { mutex.withLock { $0.wrapped = newValue } }
    }

    @inline(__always)
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { state in
            _DefaultsUnchecked(wrapped: body(&state.wrapped))
        }.wrapped
    }
}
