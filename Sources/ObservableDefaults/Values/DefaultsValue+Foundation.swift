import Foundation

extension DefaultsValue {
    /// Converts a Foundation object graph (`String`, `NSNumber`, `Int`, `Double`, `Bool`, `Date`, `Data`,
    /// `URL`, arrays, string-keyed dictionaries, ``DefaultsValue``) into a value; `nil` for anything else.
    ///
    /// Accepts what `UserDefaults.set(_:forKey:)` accepts: every Swift integer type (an unsigned value
    /// above `Int.max` becomes its decimal `.string`, as in ``DefaultsValueConvertible``, so it stays exact), `Float` (widened exactly to `Double`), `NSString`, `NSNumber`,
    /// `NSDate`, `NSData`, `NSArray`, `NSDictionary` with string keys, and `URL` (stored as its
    /// `absoluteString`). An `NSNumber` made from a `Bool` becomes `.bool`, never an integer. A collection
    /// with any element that does not convert makes the whole conversion fail, and so does `nil`.
    public init?(any object: Any) {
        // An optional boxed in `Any` would defeat the NSNumber check below: unwrap it first.
        if let optional = object as? any OptionalUnwrapping {
            guard let wrapped = optional.wrappedValue else { return nil }
            self.init(any: wrapped)
            return
        }
        // NSNumber first: Swift casts bridge it to Bool and Int alike, so only its own type tells booleans
        // from numbers. Native Swift values never cast to NSNumber here because of the type check.
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber {
            self = DefaultsValue(number: number)
            return
        }
        switch object {
        case let value as DefaultsValue: self = value
        case let value as String: self = .string(value)
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(value)
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Int8: self = .integer(Int(value))
        case let value as Int16: self = .integer(Int(value))
        case let value as Int32: self = .integer(Int(value))
        case let value as Int64: self = .integer(Int(value))
        case let value as UInt8: self = .integer(Int(value))
        case let value as UInt16: self = .integer(Int(value))
        case let value as UInt32: self = .integer(Int(value))
        case let value as UInt: self = value.defaultsValue
        case let value as UInt64: self = value.defaultsValue
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let value as URL: self = .string(value.absoluteString)
        case let array as [Any]:
            var values: [DefaultsValue] = []
            values.reserveCapacity(array.count)
            for element in array {
                guard let value = DefaultsValue(any: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let dictionary as [String: Any]:
            var values: [String: DefaultsValue] = [:]
            values.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let value = DefaultsValue(any: element) else { return nil }
                values[key] = value
            }
            self = .dictionary(values)
        case let dictionary as [AnyHashable: Any]:
            var values: [String: DefaultsValue] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String, let value = DefaultsValue(any: element) else { return nil }
                values[key] = value
            }
            self = .dictionary(values)
        default:
            return nil
        }
    }

    /// Classifies an `NSNumber` by how it was made: swift-corelibs-foundation gives booleans their own
    /// class (`__NSCFBoolean`, the class of `NSNumber(value: true)`), and `objCType` separates integers
    /// (`c s i l q`, unsigned `C S I L Q`) from reals (`f d`).
    private init(number: NSNumber) {
        if type(of: number) == type(of: NSNumber(value: true)) {
            self = .bool(number.boolValue)
            return
        }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            self = .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"):
            self = number.uint64Value.defaultsValue
        default:
            self = .integer(number.intValue)
        }
    }

    /// The value as a Foundation object (`String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]`,
    /// `[String: Any]`), the way `UserDefaults.object(forKey:)` returns it.
    public var foundationObject: Any {
        switch self {
        case .string(let value): value
        case .integer(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let values): values.map(\.foundationObject) as [Any]
        case .dictionary(let values): values.mapValues(\.foundationObject) as [String: Any]
        }
    }
}

/// Lets ``DefaultsValue/init(any:)`` see through an `Optional` boxed in `Any`.
private protocol OptionalUnwrapping {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalUnwrapping {
    fileprivate var wrappedValue: Any? { map { $0 as Any } }
}

extension DefaultsValue {
    /// Defaults given as Foundation objects, converted for `register(defaults:)` (a suite's or a cloud
    /// store's): an object of an unsupported type is left out, and `refuse` gets the error to report for it
    /// (naming `fileURL`, the suite's file, when there is one).
    static func registrable(_ defaults: [String: Any], fileURL: URL? = nil, refuse: (DefaultsError) -> Void) -> [String:
        DefaultsValue]
    {
        var converted: [String: DefaultsValue] = [:]
        for (key, object) in defaults {
            if let value = DefaultsValue(any: object) {
                converted[key] = value
            } else {
                refuse(
                    DefaultsError(
                        .unsupportedValue, message: "cannot register a default of type \(type(of: object))",
                        fileURL: fileURL, key: key))
            }
        }
        return converted
    }
}
