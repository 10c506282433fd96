import Foundation
import Observation

/// The generated `update(_:_:)` and `performBatchUpdates(_:)` of an `@ObservableCloud` object.
extension _CloudObjectBinding {
    /// Replaces the value of the persisted property at `keyPath` with what `transform` makes of it, in one
    /// ``CloudKeyValueStore/update(forKey:_:)`` of its key: atomic across every machine sharing the store
    /// when online, applied locally at once and run again on the server's value at upload when offline.
    /// `transform` gets the value the store holds, else the declaration default, and returns the new one
    /// (`nil` on an Optional removes the key); it may run more than once, also on the store's sync thread.
    ///
    /// Afterwards the property is what the store holds, told as an own write: `willSet`, Observation for that
    /// key path, `didSet` — once, and only when the value changed.
    /// - Returns: the value stored.
    /// - Throws: the error of `transform`; a ``DefaultsError`` when the key holds a value of another type,
    ///   the new value cannot be stored, or `keyPath` is not a persisted property; then the key is unchanged.
    public func update<Host: AnyObject, Value>(
        _ keyPath: KeyPath<Host, Value>, of host: Host, _ transform: @escaping @Sendable (Value) throws -> Value
    ) throws -> Value {
        let configuration = currentWriteConfiguration
        let store = configuration.store
        let property = state.withLock { state in
            state.updaters.values.lazy.flatMap { $0 }.first { $0.keyPath == keyPath }
        }
        guard let property, let slot = property.slot as? _DefaultsSlot<Value> else {
            throw DefaultsError(
                .unsupportedValue,
                message: "the key path \(keyPath) is not a persisted property of \(Host.self) (it is @ObservableOnly, "
                    + "@Ignore or computed, or the object's observation has not started)")
        }
        let (fullKey, skipped) = _propertyWriteKey(
            property.key, prefix: configuration.prefix, ownObserver: configuration.observer,
            sharedKeys: configuration.sharedKeys)
        let fallback = slot.fallback(from: store, fullKey: fullKey).value
        // The slot and the default are only read (the codec is immutable); the transform is the caller's.
        let captured = _DefaultsUnchecked(wrapped: (slot, fallback))
        let stored = try store.update(forKey: fullKey, skipping: skipped) { current in
            let (slot, fallback) = captured.wrapped
            var value = fallback
            if let current {
                guard let decoded = slot.codec.decode(current) else {
                    throw DefaultsError(
                        .wrongType,
                        message:
                            "the key holds \(EtcdAnswer.describe(current)), not a value of type \(Value.self): the update was not made",
                        key: fullKey)
                }
                value = decoded
            }
            return try slot.codec.encode(transform(value))
        }
        property.apply(store, fullKey)
        return stored.flatMap { slot.codec.decode($0) } ?? fallback
    }
}
