import Foundation

/// A value a suite can hold: the closed set of types a settings file stores.
///
/// Every suite keeps its contents as `[String: DefaultsValue]`. The model is `Sendable` and `Hashable`,
/// so values can be compared to find exactly which keys changed when a file is re-read.
///
/// Floating-point values compare by bit pattern (so `-0.0` differs from `0.0`, and NaN equals NaN):
/// a value read back from a file must equal the value that was written, or reloading would report
/// phantom changes.
public enum DefaultsValue: Sendable {
    /// A string.
    case string(String)
    /// A signed 64-bit integer.
    case integer(Int)
    /// A double-precision floating-point number; stays a double through every file format.
    case double(Double)
    /// A boolean; never confused with the integers 0 and 1.
    case bool(Bool)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// An ordered list of values.
    case array([DefaultsValue])
    /// A string-keyed dictionary of values.
    case dictionary([String: DefaultsValue])
}

extension DefaultsValue: Hashable {
    /// Whether two values are the same value of the same case.
    ///
    /// Doubles and dates compare by bit pattern, so `-0.0` differs from `0.0`, and any `NaN` equals any `NaN`
    /// (a reload of an unchanged file never reports a change).
    public static func == (lhs: DefaultsValue, rhs: DefaultsValue) -> Bool {
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case let (.bool(a), .bool(b)): return a == b
        case let (.date(a), .date(b)):
            let x = a.timeIntervalSinceReferenceDate, y = b.timeIntervalSinceReferenceDate
            return x.bitPattern == y.bitPattern
        case let (.data(a), .data(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.dictionary(a), .dictionary(b)): return a == b
        default: return false
        }
    }

    /// Hashes the case and its payload, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let value): hasher.combine(0); hasher.combine(value)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .double(let value):
            hasher.combine(2); hasher.combine(value.isNaN ? Double.nan.bitPattern : value.bitPattern)
        case .bool(let value): hasher.combine(3); hasher.combine(value)
        case .date(let value): hasher.combine(4); hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let value): hasher.combine(5); hasher.combine(value)
        case .array(let value): hasher.combine(6); hasher.combine(value)
        case .dictionary(let value): hasher.combine(7); hasher.combine(value)
        }
    }
}

extension DefaultsValue {
    /// The name of this value's type as error messages and the `defaults` tool show it
    /// (`string`, `integer`, `double`, `boolean`, `date`, `data`, `array`, `dictionary`).
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}
