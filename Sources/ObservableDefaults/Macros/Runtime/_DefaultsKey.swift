// A key written as an expression (`@DefaultsKey(userDefaultsKey: Keys.volume)`, an interpolation) is
// evaluated once per object, through these overloads, where the property's slot is created.
// Implementation detail of the macros; not API.

/// A `String` key.
public func _defaultsKey(_ key: String, property: String) -> String { key }

/// A `String?` key (`@DefaultsBacked(userDefaultsKey:)` is optional): `nil` means the property's name.
public func _defaultsKey(_ key: String?, property: String) -> String { key ?? property }

/// Any other type. The compiler already rejects it where the attribute is written (the macro's parameter is
/// a `String`); this overload only keeps the generated code from adding a second error about the same thing.
public func _defaultsKey<T>(_ key: T, property: String) -> String {
    preconditionFailure("the key of '\(property)' is a \(T.self), not a String")
}
