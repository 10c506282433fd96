import Foundation

/// A Foundation reference type a persisted property can have (`NSString`, `NSNumber`, `NSData`, `NSDate`,
/// `NSURL`), stored as the matching value type. These classes cannot conform to
/// ``DefaultsValueConvertible`` (its initializer would have to be `required`), hence this protocol.
///
/// Implementation detail of the macros; not API.
public protocol _DefaultsFoundationObject: AnyObject {
    /// The object for a stored value, or `nil` when it does not fit.
    static func _fromDefaultsValue(_ value: DefaultsValue) -> Self?
    /// The value to store.
    var _defaultsValue: DefaultsValue { get }
}

extension NSString: _DefaultsFoundationObject {
    /// A stored string.
    public static func _fromDefaultsValue(_ value: DefaultsValue) -> Self? {
        guard case .string(let text) = value else { return nil }
        return NSString(string: text) as? Self
    }
    /// Stored as a string.
    public var _defaultsValue: DefaultsValue { .string(String(self)) }
}

extension NSNumber: _DefaultsFoundationObject {
    /// A stored integer, real or Boolean.
    public static func _fromDefaultsValue(_ value: DefaultsValue) -> Self? {
        switch value {
        case .integer(let number): return NSNumber(value: number) as? Self
        case .double(let number): return NSNumber(value: number) as? Self
        case .bool(let flag): return NSNumber(value: flag) as? Self
        default: return nil
        }
    }
    /// Stored as an integer, a real or a Boolean, by how the number was made.
    public var _defaultsValue: DefaultsValue { DefaultsValue(any: self) ?? .double(doubleValue) }
}

extension NSData: _DefaultsFoundationObject {
    /// Stored data.
    public static func _fromDefaultsValue(_ value: DefaultsValue) -> Self? {
        guard let data = Data(defaultsValue: value) else { return nil }  // also base64 text (JSON suites)
        return NSData(data: data) as? Self
    }
    /// Stored as data.
    public var _defaultsValue: DefaultsValue { .data(Data(referencing: self)) }
}

extension NSDate: _DefaultsFoundationObject {
    /// A stored date.
    public static func _fromDefaultsValue(_ value: DefaultsValue) -> Self? {
        guard let date = Date(defaultsValue: value) else { return nil }  // also ISO 8601 text (JSON suites)
        return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate) as? Self
    }
    /// Stored as a date.
    public var _defaultsValue: DefaultsValue {
        .date(Date(timeIntervalSinceReferenceDate: timeIntervalSinceReferenceDate))
    }
}

extension NSURL: _DefaultsFoundationObject {
    /// A stored URL string (as `URL` properties are stored).
    public static func _fromDefaultsValue(_ value: DefaultsValue) -> Self? {
        guard let url = URL(defaultsValue: value) else { return nil }
        return NSURL(string: url.absoluteString) as? Self
    }
    /// Stored as its absolute string (as `URL` properties are stored).
    public var _defaultsValue: DefaultsValue { (self as URL).defaultsValue }
}

extension _DefaultsCodec where Value: _DefaultsFoundationObject {
    /// A Foundation object, stored as the matching value.
    static var foundationObject: Self {
        Self(encode: { $0._defaultsValue }, decode: { Value._fromDefaultsValue($0) })
    }
}

/// A Foundation object (`NSString`, `NSNumber`, `NSData`, `NSDate`, `NSURL`): stored as the matching value.
public func _defaultsSlot<V: _DefaultsFoundationObject>(key: String, _ value: V) -> _DefaultsSlot<V> {
    _DefaultsSlot(key: key, default: value, codec: .foundationObject)
}

/// Optional — a Foundation object: stored as the matching value.
public func _defaultsOptionalSlot<V: _DefaultsFoundationObject>(key: String, _ value: V?) -> _DefaultsSlot<V?> {
    _DefaultsSlot(key: key, default: value, codec: _DefaultsCodec<V>.foundationObject.optional())
}
