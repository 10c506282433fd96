import Observation

/// The storage of an `@ObservableOnly` property: a lock-protected value.
///
/// Implementation detail of the macros (the generated code uses it); not API.
public final class _DefaultsBox<Value> {
    @usableFromInline let storage: _DefaultsLocked<Value?>

    /// A box holding `value`.
    public init(_ value: Value) { storage = _DefaultsLocked(value) }

    /// An empty box, filled by the property's `init` accessor (the compiler guarantees it runs before any read).
    public init() { storage = _DefaultsLocked(nil) }

    /// Sets the value from the property's `init` accessor.
    public func initialize(_ value: Value) { storage.value = value }

    /// The current value.
    @inlinable
    public var value: Value {
        get { read() }
        set { write(newValue) }
    }

    @inlinable
    func read() -> Value { storage.withLock { $0 }! }

    @inlinable
    func write(_ value: Value) { storage.withLock { $0 = value } }

    /// A property write: observers, then the mutation reported to Observation when `notify`.
    @inlinable
    public func set<Host: Observation.Observable & AnyObject>(
        _ newValue: Value, notify: Bool, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)? = nil, didSet: ((Value) -> Void)? = nil
    ) {
        let oldValue: Value? = didSet == nil ? nil : read()
        willSet?(newValue)
        if notify {
            registrar.withMutation(of: host, keyPath: keyPath) { write(newValue) }
        } else {
            write(newValue)
        }
        if let didSet, let oldValue { didSet(oldValue) }
    }
}

extension _DefaultsBox: @unchecked Sendable where Value: Sendable {}

/// Whether a write of `new` over `old` is a change observers must hear about (the rules of `@Observable`):
/// always, unless the values are `Equatable` and equal, or the same object.
public func _defaultsShouldNotify<T>(_ old: T, _ new: T) -> Bool { true }
/// Equatable values notify when they differ.
public func _defaultsShouldNotify<T: Equatable>(_ old: T, _ new: T) -> Bool { old != new }
/// Objects notify when they are different objects.
public func _defaultsShouldNotify<T: AnyObject>(_ old: T, _ new: T) -> Bool { old !== new }
/// Equatable objects notify when they differ.
public func _defaultsShouldNotify<T: Equatable & AnyObject>(_ old: T, _ new: T) -> Bool { old != new }
