import Foundation

/// A Swift type that converts to and from a ``DefaultsValue`` (the property-list types and their
/// collections). Typed getters of ``DefaultsSuite`` and the macros use it.
///
/// Reading is lenient where a person editing a file by hand would expect it: a `Double` accepts an
/// integer, an integer accepts a double with an exact integral value, a `Date` accepts an ISO 8601
/// string, `Data` accepts a base64 string. `Optional` does not conform: callers treat `nil` as a
/// missing key.
public protocol DefaultsValueConvertible {
    /// Converts a stored value, or returns `nil` when it does not have a fitting type.
    init?(defaultsValue: DefaultsValue)
    /// The value to store.
    var defaultsValue: DefaultsValue { get }
}

extension DefaultsValue: DefaultsValueConvertible {
    /// The value itself.
    public init?(defaultsValue: DefaultsValue) { self = defaultsValue }
    /// The value itself.
    public var defaultsValue: DefaultsValue { self }
}

extension String: DefaultsValueConvertible {
    /// The string of a `.string` value.
    public init?(defaultsValue: DefaultsValue) {
        guard case .string(let value) = defaultsValue else { return nil }
        self = value
    }
    /// `.string(self)`.
    public var defaultsValue: DefaultsValue { .string(self) }
}

extension Bool: DefaultsValueConvertible {
    /// The boolean of a `.bool` value; integers are not booleans.
    public init?(defaultsValue: DefaultsValue) {
        guard case .bool(let value) = defaultsValue else { return nil }
        self = value
    }
    /// `.bool(self)`.
    public var defaultsValue: DefaultsValue { .bool(self) }
}

extension Double: DefaultsValueConvertible {
    /// The number of a `.double` or `.integer` value.
    public init?(defaultsValue: DefaultsValue) {
        switch defaultsValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
    /// `.double(self)`.
    public var defaultsValue: DefaultsValue { .double(self) }
}

extension Float: DefaultsValueConvertible {
    /// The number of a `.double` or `.integer` value, rounded to `Float`; `nil` when a finite number is
    /// beyond `Float`'s range.
    public init?(defaultsValue: DefaultsValue) {
        guard let double = Double(defaultsValue: defaultsValue) else { return nil }
        let value = Float(double)
        if value.isInfinite && double.isFinite { return nil }
        self = value
    }
    /// `.double` holding the exact value of `self`.
    public var defaultsValue: DefaultsValue { .double(Double(self)) }
}
