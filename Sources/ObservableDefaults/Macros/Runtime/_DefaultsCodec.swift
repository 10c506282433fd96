import Foundation

/// How a property's value is stored: conversion to and from ``DefaultsValue``. The storage-resolution
/// overloads of ``_defaultsSlot(key:_:)`` pick one at compile time.
///
/// Implementation detail of the macros; not API.
public struct _DefaultsCodec<Value> {
    /// The stored form; `nil` removes the key (Optional `nil`).
    @usableFromInline let encode: (Value) throws -> DefaultsValue?
    /// The value of a stored form, or `nil` when it does not fit.
    let decode: (DefaultsValue) -> Value?
}

extension _DefaultsCodec where Value: DefaultsValueConvertible {
    /// A property-list value, stored directly.
    static var propertyList: Self {
        Self(encode: { $0.defaultsValue }, decode: { Value(defaultsValue: $0) })
    }
}

extension _DefaultsCodec where Value: RawRepresentable, Value.RawValue: DefaultsValueConvertible {
    /// A raw-representable value, stored as its raw value.
    static var rawValue: Self {
        Self(
            encode: { $0.rawValue.defaultsValue },
            decode: { Value.RawValue(defaultsValue: $0).flatMap(Value.init(rawValue:)) })
    }
}

extension _DefaultsCodec
where Value: RawRepresentable & DefaultsValueConvertible, Value.RawValue: DefaultsValueConvertible {
    /// Stored as its raw value; reading falls back to the value's own property-list form.
    static var rawValueWithFallback: Self {
        Self(
            encode: { $0.rawValue.defaultsValue },
            decode: { stored in
                Value.RawValue(defaultsValue: stored).flatMap(Value.init(rawValue:)) ?? Value(defaultsValue: stored)
            })
    }
}

extension _DefaultsCodec where Value: Codable {
    /// A Codable value, stored as its natural structure; reading also accepts JSON in data or in a base64 string
    /// (the Apple library's form).
    static var codable: Self {
        Self(
            encode: { try DefaultsValueEncoder().encode($0) },
            decode: { stored in
                if let value = try? DefaultsValueDecoder().decode(Value.self, from: stored) { return value }
                let json: Data?
                switch stored {
                case .data(let data): json = data
                case .string(let text): json = Data(base64Encoded: text) ?? Data(text.utf8)
                default: json = nil
                }
                return json.flatMap { try? JSONDecoder().decode(Value.self, from: $0) }
            })
    }
}

extension _DefaultsCodec {
    /// The same rule for an Optional: `nil` removes the key.
    func optional() -> _DefaultsCodec<Value?> {
        let encode = self.encode, decode = self.decode
        return _DefaultsCodec<Value?>(
            encode: { value in try value.flatMap(encode) },
            decode: { stored in decode(stored).map { Optional.some($0) } })
    }
}
