import Foundation

/// The Apple library's helper for reading and writing one key of a suite with its property's storage rule,
/// outside a class: `UserDefaultsWrapper<Theme>.getValue("theme", .light, suite)`.
///
/// The overloads pick the rule the macros pick for a property of type `Value` (raw value, property-list
/// value, or `Codable` structure; see ``ObservableDefaults(autoInit:ignoreExternalChanges:suiteName:prefix:observeFirst:limitToInstance:defaultIsolationIsMainActor:)``),
/// so a value written here reads back in an object's property and the other way round. A stored value that
/// does not fit `Value` reads as `defaultValue`; a value that cannot be encoded is reported on the suite's
/// error channel and nothing is written.
public struct UserDefaultsWrapper<Value> {
    private init() {}

    /// The value of `slot`'s key in `suite` (the registered default when none is stored), or the slot's
    /// default when there is neither or it does not fit.
    static func read<Stored>(_ slot: _DefaultsSlot<Stored>, from suite: DefaultsSuite) -> Stored {
        suite.value(forKey: slot.key).flatMap(slot.codec.decode) ?? slot.declarationDefault
    }

    /// Stores `value` under `slot`'s key in `suite` (`nil` of an Optional removes the key).
    static func write<Stored>(_ value: Stored, _ slot: _DefaultsSlot<Stored>, to suite: DefaultsSuite) {
        do {
            suite.set(try slot.codec.encode(value), forKey: slot.key)
        } catch {
            suite.report(
                DefaultsError(
                    .unsupportedValue, message: "cannot encode a value of type \(Stored.self): \(error)",
                    fileURL: suite.fileURL, key: slot.key))
        }
    }
}

extension UserDefaultsWrapper
where Value: RawRepresentable & DefaultsValueConvertible & Codable, Value.RawValue: DefaultsValueConvertible {
    /// Reads a raw-representable property-list value (the raw value; reading falls back to the value's own form) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a raw-representable property-list value (the raw value; reading falls back to the value's own form) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a raw-representable property-list value (the raw value; reading falls back to the value's own form) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a raw-representable property-list value (the raw value; reading falls back to the value's own form) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper
where Value: RawRepresentable & DefaultsValueConvertible, Value.RawValue: DefaultsValueConvertible {
    /// Reads a raw-representable property-list value (the raw value; reading falls back to the value's own form) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a raw-representable property-list value (the raw value; reading falls back to the value's own form) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a raw-representable property-list value (the raw value; reading falls back to the value's own form) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a raw-representable property-list value (the raw value; reading falls back to the value's own form) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper where Value: RawRepresentable & Codable, Value.RawValue: DefaultsValueConvertible {
    /// Reads a raw-representable value (its raw value) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a raw-representable value (its raw value) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a raw-representable value (its raw value) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a raw-representable value (its raw value) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper where Value: RawRepresentable, Value.RawValue: DefaultsValueConvertible {
    /// Reads a raw-representable value (its raw value) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a raw-representable value (its raw value) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a raw-representable value (its raw value) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a raw-representable value (its raw value) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper where Value: DefaultsValueConvertible & Codable {
    /// Reads a property-list value (stored directly) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a property-list value (stored directly) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a property-list value (stored directly) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a property-list value (stored directly) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper where Value: DefaultsValueConvertible {
    /// Reads a property-list value (stored directly) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a property-list value (stored directly) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a property-list value (stored directly) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a property-list value (stored directly) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}

extension UserDefaultsWrapper where Value: Codable {
    /// Reads a Codable value (its natural structure) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value, _ store: DefaultsSuite) -> Value {
        read(_defaultsSlot(key: key, defaultValue), from: store)
    }

    /// Reads a Codable value (its natural structure) stored under `key`, or `defaultValue` when the key is absent or does not fit.
    public nonisolated static func getValue(_ key: String, _ defaultValue: Value?, _ store: DefaultsSuite) -> Value? {
        read(_defaultsOptionalSlot(key: key, defaultValue), from: store)
    }

    /// Stores a Codable value (its natural structure) under `key`.
    public nonisolated static func setValue(_ key: String, _ newValue: Value, _ store: DefaultsSuite) {
        write(newValue, _defaultsSlot(key: key, newValue), to: store)
    }

    /// Stores a Codable value (its natural structure) under `key`; `nil` removes the key.
    public nonisolated static func setValue(_ key: String, _ newValue: Value?, _ store: DefaultsSuite) {
        write(newValue, _defaultsOptionalSlot(key: key, newValue), to: store)
    }
}
