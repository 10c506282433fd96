// The storage-resolution rules, as overloads: the compiler picks the most specific one for the property's
// type where the generated code calls it. Order of preference (most specific wins):
// RawRepresentable & plist & Codable, RawRepresentable & plist, RawRepresentable (plist raw value),
// plist & Codable, plist, Codable only. Optional properties use `_defaultsOptionalSlot`, where `nil` removes
// the key. Implementation detail of the macros; not API.

/// RawRepresentable & property list & Codable: the raw value, reading falls back to the property-list form.
public func _defaultsSlot<V: RawRepresentable & DefaultsValueConvertible & Codable>(key: String, _ value: V)
    -> _DefaultsSlot<V> where V.RawValue: DefaultsValueConvertible
{
    _DefaultsSlot(key: key, default: value, codec: .rawValueWithFallback)
}

/// RawRepresentable & property list: the raw value, reading falls back to the property-list form.
public func _defaultsSlot<V: RawRepresentable & DefaultsValueConvertible>(key: String, _ value: V) -> _DefaultsSlot<V>
where V.RawValue: DefaultsValueConvertible {
    _DefaultsSlot(key: key, default: value, codec: .rawValueWithFallback)
}

/// RawRepresentable (property-list raw value), also Codable: the raw value.
public func _defaultsSlot<V: RawRepresentable & Codable>(key: String, _ value: V) -> _DefaultsSlot<V>
where V.RawValue: DefaultsValueConvertible {
    _DefaultsSlot(key: key, default: value, codec: .rawValue)
}

/// RawRepresentable with a property-list raw value: the raw value.
public func _defaultsSlot<V: RawRepresentable>(key: String, _ value: V) -> _DefaultsSlot<V>
where V.RawValue: DefaultsValueConvertible {
    _DefaultsSlot(key: key, default: value, codec: .rawValue)
}

/// Property list & Codable: stored directly.
public func _defaultsSlot<V: DefaultsValueConvertible & Codable>(key: String, _ value: V) -> _DefaultsSlot<V> {
    _DefaultsSlot(key: key, default: value, codec: .propertyList)
}

/// Property list: stored directly.
public func _defaultsSlot<V: DefaultsValueConvertible>(key: String, _ value: V) -> _DefaultsSlot<V> {
    _DefaultsSlot(key: key, default: value, codec: .propertyList)
}

/// Codable only: stored as its natural structure.
public func _defaultsSlot<V: Codable>(key: String, _ value: V) -> _DefaultsSlot<V> {
    _DefaultsSlot(key: key, default: value, codec: .codable)
}

/// Optional — RawRepresentable & property list & Codable: the raw value, reading falls back to the property-list form.
public func _defaultsOptionalSlot<V: RawRepresentable & DefaultsValueConvertible & Codable>(key: String, _ value: V?)
    -> _DefaultsSlot<V?> where V.RawValue: DefaultsValueConvertible
{
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.rawValueWithFallback.optional())
}

/// Optional — RawRepresentable & property list: the raw value, reading falls back to the property-list form.
public func _defaultsOptionalSlot<V: RawRepresentable & DefaultsValueConvertible>(key: String, _ value: V?)
    -> _DefaultsSlot<V?> where V.RawValue: DefaultsValueConvertible
{
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.rawValueWithFallback.optional())
}

/// Optional — RawRepresentable (property-list raw value), also Codable: the raw value.
public func _defaultsOptionalSlot<V: RawRepresentable & Codable>(key: String, _ value: V?) -> _DefaultsSlot<V?>
where V.RawValue: DefaultsValueConvertible {
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.rawValue.optional())
}

/// Optional — RawRepresentable with a property-list raw value: the raw value.
public func _defaultsOptionalSlot<V: RawRepresentable>(key: String, _ value: V?) -> _DefaultsSlot<V?>
where V.RawValue: DefaultsValueConvertible {
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.rawValue.optional())
}

/// Optional — Property list & Codable: stored directly.
public func _defaultsOptionalSlot<V: DefaultsValueConvertible & Codable>(key: String, _ value: V?) -> _DefaultsSlot<V?>
{
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.propertyList.optional())
}

/// Optional — Property list: stored directly.
public func _defaultsOptionalSlot<V: DefaultsValueConvertible>(key: String, _ value: V?) -> _DefaultsSlot<V?> {
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.propertyList.optional())
}

/// Optional — Codable only: stored as its natural structure.
public func _defaultsOptionalSlot<V: Codable>(key: String, _ value: V?) -> _DefaultsSlot<V?> {
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.codable.optional())
}

/// `Nullable` (the Apple library's optional `Codable` wrapper): stored like an Optional, `.none` removes the key.
public func _defaultsSlot<V: Codable & Equatable>(key: String, _ value: Nullable<V>) -> _DefaultsSlot<Nullable<V>> {
    let wrapped = _DefaultsCodec<V>.codable
    return _DefaultsSlot(
        key: key, default: value,
        codec: _DefaultsCodec(
            encode: { nullable in try nullable.value.flatMap(wrapped.encode) },
            decode: { stored in wrapped.decode(stored).map { .some($0) } }))
}

// Chosen only when no overload above fits the property's type (a generic parameter without constraints is the
// least specific). The result is not a slot: the generated code passes a factory's result through a pair of
// overloads of its own, one taking `_DefaultsSlot`, one unavailable taking `_DefaultsUnstorable` with a message
// that names the property's type, so such a property gets one error saying what to do instead of a list of
// every candidate.

/// Any other type: it cannot be stored; the generated code turns this into its error.
public func _defaultsSlot<V>(key: String, _ value: V) -> _DefaultsUnstorable<V> {
    _DefaultsUnstorable()
}

/// Any other optional type: it cannot be stored; the generated code turns this into its error.
public func _defaultsOptionalSlot<V>(key: String, _ value: V?) -> _DefaultsUnstorable<V?> {
    _DefaultsUnstorable()
}

/// What `_defaultsSlot(key:_:)` returns for a property whose type has no storage rule: a marker the generated
/// code only accepts in an unavailable declaration, whose message names the property's type. Implementation
/// detail of the macros; not API.
public struct _DefaultsUnstorable<Value>: Sendable {
    /// The marker (it holds nothing).
    public init() {}
}
