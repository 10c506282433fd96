import Foundation

extension Array: DefaultsValueConvertible where Element: DefaultsValueConvertible {
    /// The elements of an `.array` value; `nil` if any element does not convert.
    public init?(defaultsValue: DefaultsValue) {
        guard case .array(let values) = defaultsValue else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for value in values {
            guard let element = Element(defaultsValue: value) else { return nil }
            elements.append(element)
        }
        self = elements
    }
    /// `.array` of the elements' values.
    public var defaultsValue: DefaultsValue { .array(map(\.defaultsValue)) }
}

extension Dictionary: DefaultsValueConvertible where Key == String, Value: DefaultsValueConvertible {
    /// The entries of a `.dictionary` value; `nil` if any value does not convert.
    public init?(defaultsValue: DefaultsValue) {
        guard case .dictionary(let values) = defaultsValue else { return nil }
        var entries: [String: Value] = [:]
        entries.reserveCapacity(values.count)
        for (key, value) in values {
            guard let converted = Value(defaultsValue: value) else { return nil }
            entries[key] = converted
        }
        self = entries
    }
    /// `.dictionary` of the entries' values.
    public var defaultsValue: DefaultsValue { .dictionary(mapValues(\.defaultsValue)) }
}
