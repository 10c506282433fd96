import Foundation

/// A Swift type that converts to and from a ``DefaultsValue`` (the property-list types and their
/// collections). Typed getters of ``DefaultsSuite`` and the macros use it.
///
/// Reading is lenient where a person editing a file by hand would expect it: a `Double` accepts an
/// integer, a `Date` accepts an ISO 8601 string, `Data` accepts a base64 string.
public protocol DefaultsValueConvertible {
    /// Converts a stored value, or returns `nil` when it does not have a fitting type.
    init?(defaultsValue: DefaultsValue)
    /// The value to store.
    var defaultsValue: DefaultsValue { get }
}

// TODO(codec helper): conformances for String, Bool, all integer types, Double, Float, Date, Data, URL,
// Array, Dictionary (String keys), Optional, DefaultsValue.
