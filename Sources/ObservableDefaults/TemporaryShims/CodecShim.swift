// TEMPORARY: stand-ins for the conformances and the Codable bridge being written on `codec`, so the
// macros compile and their tests run before they land. Deleted when `main` is merged.
import Foundation

extension String: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .string(let v) = defaultsValue else { return nil }; self = v }
    public var defaultsValue: DefaultsValue { .string(self) }
}
extension Int: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .integer(let v) = defaultsValue else { return nil }; self = v }
    public var defaultsValue: DefaultsValue { .integer(self) }
}
extension Bool: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .bool(let v) = defaultsValue else { return nil }; self = v }
    public var defaultsValue: DefaultsValue { .bool(self) }
}
extension Double: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) {
        switch defaultsValue {
        case .double(let v): self = v
        case .integer(let v): self = Double(v)
        default: return nil
        }
    }
    public var defaultsValue: DefaultsValue { .double(self) }
}
extension Date: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .date(let v) = defaultsValue else { return nil }; self = v }
    public var defaultsValue: DefaultsValue { .date(self) }
}
extension Data: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .data(let v) = defaultsValue else { return nil }; self = v }
    public var defaultsValue: DefaultsValue { .data(self) }
}
extension URL: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) { guard case .string(let v) = defaultsValue else { return nil }; self.init(string: v) }
    public var defaultsValue: DefaultsValue { .string(absoluteString) }
}
extension Array: DefaultsValueConvertible where Element: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) {
        guard case .array(let items) = defaultsValue else { return nil }
        var result: [Element] = []
        for item in items { guard let e = Element(defaultsValue: item) else { return nil }; result.append(e) }
        self = result
    }
    public var defaultsValue: DefaultsValue { .array(map(\.defaultsValue)) }
}
extension Dictionary: DefaultsValueConvertible where Key == String, Value: DefaultsValueConvertible {
    public init?(defaultsValue: DefaultsValue) {
        guard case .dictionary(let items) = defaultsValue else { return nil }
        var result: [String: Value] = [:]
        for (k, item) in items { guard let e = Value(defaultsValue: item) else { return nil }; result[k] = e }
        self = result
    }
    public var defaultsValue: DefaultsValue { .dictionary(mapValues(\.defaultsValue)) }
}

public struct DefaultsValueEncoder {
    public init() {}
    public func encode<T: Encodable>(_ value: T) throws -> DefaultsValue {
        let data = try JSONEncoder().encode([value])
        let object = try JSONSerialization.jsonObject(with: data)
        return Self.convert((object as! [Any])[0])
    }
    static func convert(_ object: Any) -> DefaultsValue {
        switch object {
        case let n as NSNumber where String(cString: n.objCType) == "c" && (n == 0 || n == 1) && type(of: n) != NSNumber.self: return .bool(n.boolValue)
        case let n as NSNumber:
            let type = String(cString: n.objCType)
            if type == "c" || type == "B" { return .bool(n.boolValue) }
            return type == "d" || type == "f" ? .double(n.doubleValue) : .integer(n.intValue)
        case let s as String: return .string(s)
        case let a as [Any]: return .array(a.map(convert))
        case let d as [String: Any]: return .dictionary(d.mapValues(convert))
        default: return .string("\(object)")
        }
    }
}

public struct DefaultsValueDecoder {
    public init() {}
    public func decode<T: Decodable>(_ type: T.Type, from value: DefaultsValue) throws -> T {
        let data = try JSONSerialization.data(withJSONObject: [Self.convert(value)], options: [.fragmentsAllowed])
        return try JSONDecoder().decode([T].self, from: data)[0]
    }
    static func convert(_ value: DefaultsValue) -> Any {
        switch value {
        case .string(let s): return s
        case .integer(let i): return i
        case .double(let d): return d
        case .bool(let b): return b
        case .date(let d): return d.timeIntervalSinceReferenceDate
        case .data(let d): return d.base64EncodedString()
        case .array(let a): return a.map(convert)
        case .dictionary(let d): return d.mapValues(convert)
        }
    }
}
