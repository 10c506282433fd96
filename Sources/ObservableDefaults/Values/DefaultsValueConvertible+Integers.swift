import Foundation

extension DefaultsValueConvertible where Self: FixedWidthInteger {
    /// The number of an `.integer` value, or of a `.double` with an exact integral value, when it fits in
    /// this type. Unsigned 64-bit types also read the decimal string they store values above `Int.max` as.
    public init?(defaultsValue: DefaultsValue) {
        switch defaultsValue {
        case .integer(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .double(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .string(let text) where !Self.isSigned && Self.bitWidth > Int.bitWidth - 1:
            guard let exact = Self(text, radix: 10) else { return nil }
            self = exact
        default:
            return nil
        }
    }

    /// `.integer`; an unsigned value above `Int.max` is stored as its decimal `.string` so it stays exact.
    public var defaultsValue: DefaultsValue {
        if let value = Int(exactly: self) { return .integer(value) }
        return .string(String(self))
    }
}

extension Int: DefaultsValueConvertible {}
extension Int8: DefaultsValueConvertible {}
extension Int16: DefaultsValueConvertible {}
extension Int32: DefaultsValueConvertible {}
extension Int64: DefaultsValueConvertible {}
extension UInt: DefaultsValueConvertible {}
extension UInt8: DefaultsValueConvertible {}
extension UInt16: DefaultsValueConvertible {}
extension UInt32: DefaultsValueConvertible {}
extension UInt64: DefaultsValueConvertible {}
