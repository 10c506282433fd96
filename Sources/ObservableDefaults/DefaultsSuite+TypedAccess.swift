import Foundation

/// The typed getters of `UserDefaults`, with the same zero values for missing keys. Each one reads the
/// stored value if it converts to the type, else the registered default.
extension DefaultsSuite {
    /// The string for `key`, or `nil`.
    public func string(forKey key: String) -> String? { value(String.self, forKey: key) }
    /// The integer for `key`, or 0.
    public func integer(forKey key: String) -> Int { value(Int.self, forKey: key) ?? 0 }
    /// The double for `key` (an integer converts), or 0.
    public func double(forKey key: String) -> Double { value(Double.self, forKey: key) ?? 0 }
    /// The float for `key`, or 0.
    public func float(forKey key: String) -> Float { value(Float.self, forKey: key) ?? 0 }
    /// The boolean for `key`, or `false`.
    public func bool(forKey key: String) -> Bool { value(Bool.self, forKey: key) ?? false }
    /// The data for `key` (a base64 string converts), or `nil`.
    public func data(forKey key: String) -> Data? { value(Data.self, forKey: key) }
    /// The date for `key` (an ISO 8601 string converts), or `nil`.
    public func date(forKey key: String) -> Date? { value(Date.self, forKey: key) }
    /// The URL for `key` (stored as a string), or `nil`.
    public func url(forKey key: String) -> URL? { value(URL.self, forKey: key) }
    /// The array for `key` as Foundation objects, or `nil`.
    public func array(forKey key: String) -> [Any]? { value(forKey: key)?.arrayValue?.map(\.foundationObject) }
    /// The dictionary for `key` as Foundation objects, or `nil`.
    public func dictionary(forKey key: String) -> [String: Any]? {
        value(forKey: key)?.dictionaryValue?.mapValues(\.foundationObject)
    }
    /// The array of strings for `key`, or `nil` when it is not an array of strings.
    public func stringArray(forKey key: String) -> [String]? { value([String].self, forKey: key) }
}

extension DefaultsValue {
    var arrayValue: [DefaultsValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    var dictionaryValue: [String: DefaultsValue]? {
        if case .dictionary(let entries) = self { return entries }
        return nil
    }
}
