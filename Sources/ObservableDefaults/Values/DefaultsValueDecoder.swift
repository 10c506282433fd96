import Foundation

/// Decodes a `Decodable` value from a ``DefaultsValue`` tree written by ``DefaultsValueEncoder`` or by a
/// person editing a settings file.
///
/// It is lenient in the same ways as ``DefaultsValueConvertible``: a floating-point number accepts an
/// integer, an integer accepts a double with an exact integral value, `Date` accepts an ISO 8601 string,
/// `Data` a base64 string, and `URL` is read from a string. A missing key decodes as `nil` for optional
/// properties. Anything else that does not fit throws `DecodingError` with the coding path of the value.
///
/// It also reads the form the Apple-platform *ObservableDefaults* library stores Codable values in: when
/// the value does not decode as a tree and is `.data`, or a `.string` holding base64, whose bytes are
/// JSON, those bytes are decoded with `JSONDecoder` instead.
public struct DefaultsValueDecoder: Sendable {
    /// Values the decoded types can read through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder.
    public init() {}

    /// Decodes a value of the given type from a tree.
    public func decode<T: Decodable>(_ type: T.Type, from value: DefaultsValue) throws -> T {
        do {
            return try ValueDecoder(value: value, codingPath: [], userInfo: userInfo).decodeValue(type)
        } catch {
            guard let json = Self.appleLibraryJSON(in: value),
                let decoded = try? JSONDecoder().decode(type, from: json)
            else { throw error }
            return decoded
        }
    }

    /// The JSON bytes of a value stored by the Apple-platform library (data, or base64 text of data),
    /// if it looks like one.
    private static func appleLibraryJSON(in value: DefaultsValue) -> Data? {
        // `.data`, or a base64 `.string`: how `Data` itself reads a value.
        guard let bytes = Data(defaultsValue: value) else { return nil }
        // Cheap check before handing the bytes to JSONDecoder: JSON text starts with one of these.
        guard let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
            "{[\"-0123456789tfn".utf8.contains(first)
        else { return nil }
        return bytes
    }
}

/// The `Decoder` handed to `init(from:)`.
struct ValueDecoder: Decoder {
    let value: DefaultsValue
    let codingPath: [any CodingKey]
    let options: [CodingUserInfoKey: any Sendable]

    init(value: DefaultsValue, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.options = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { options }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let dictionary) = value else {
            throw ValueDecoding.mismatch(
                [String: Any].self, expected: "dictionary", found: value, codingPath: codingPath)
        }
        return KeyedDecodingContainer(
            ValueKeyedDecodingContainer<Key>(dictionary: dictionary, codingPath: codingPath, userInfo: options))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw ValueDecoding.mismatch([Any].self, expected: "array", found: value, codingPath: codingPath)
        }
        return ValueUnkeyedDecodingContainer(array: array, codingPath: codingPath, userInfo: options)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ValueSingleValueDecodingContainer(decoder: self)
    }

    /// Decodes a value, reading the types with a direct representation (and the lenient forms they
    /// accept) without going through their `init(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is Date.Type: return try convert(Date.self, expected: "date or ISO 8601 string") as! T
        case is Data.Type: return try convert(Data.self, expected: "data or base64 string") as! T
        case is URL.Type: return try convert(URL.self, expected: "URL string") as! T
        default: return try T(from: self)
        }
    }

    /// Converts the value with its ``DefaultsValueConvertible`` conformance, or throws a type mismatch.
    func convert<T: DefaultsValueConvertible>(_ type: T.Type, expected: String) throws -> T {
        guard let converted = T(defaultsValue: value) else {
            throw ValueDecoding.mismatch(type, expected: expected, found: value, codingPath: codingPath)
        }
        return converted
    }
}

/// Error construction shared by the containers.
enum ValueDecoding {
    static func mismatch(_ type: Any.Type, expected: String, found value: DefaultsValue, codingPath: [any CodingKey])
        -> DecodingError
    {
        // "expects a number, found the string "lots"": read after the member's path in the errors people see.
        let expectation = expected.hasPrefix("data") ? expected : expected.withIndefiniteArticle
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath, debugDescription: "expects \(expectation), found \(describe(value))"))
    }

    /// The value as a sentence names it: `the string "lots"`, `the number 5`, `true`, `an array`.
    static func describe(_ value: DefaultsValue) -> String {
        switch value {
        case .string(let string): "the string \"\(string.count > 40 ? String(string.prefix(40)) + "…" : string)\""
        case .integer(let integer): "the number \(integer)"
        case .double(let double): "the number \(double)"
        case .bool(let bool): "\(bool)"
        case .data: "data"
        default: value.typeName.withIndefiniteArticle
        }
    }
}

struct ValueKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let dictionary: [String: DefaultsValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { dictionary[key.stringValue] != nil }

    private func decoder(for key: Key) throws -> ValueDecoder {
        guard let value = dictionary[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "no value for key '\(key.stringValue)'")
            )
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key], userInfo: userInfo)
    }

    // A stored value is never null: an absent key is how a suite says nil.
    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder(for: key).convert(type, expected: "boolean")
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder(for: key).convert(type, expected: "string")
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder(for: key).convert(type, expected: "number")
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder(for: key).convert(type, expected: "number")
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try decoder(for: key).convert(type, expected: "integer")
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try decoder(for: key).convert(type, expected: "integer in Int8 range")
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try decoder(for: key).convert(type, expected: "integer in Int16 range")
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try decoder(for: key).convert(type, expected: "integer in Int32 range")
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try decoder(for: key).convert(type, expected: "integer")
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try decoder(for: key).convert(type, expected: "non-negative integer")
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try decoder(for: key).convert(type, expected: "integer in UInt8 range")
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try decoder(for: key).convert(type, expected: "integer in UInt16 range")
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try decoder(for: key).convert(type, expected: "integer in UInt32 range")
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try decoder(for: key).convert(type, expected: "non-negative integer")
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder(for: key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(forKey: ValueCodingKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(forKey: key as any CodingKey)
    }

    private func superDecoder(forKey key: any CodingKey) throws -> any Decoder {
        // Like JSONDecoder: a missing entry decodes as an empty dictionary, so a superclass with only
        // optional properties still decodes.
        ValueDecoder(
            value: dictionary[key.stringValue] ?? .dictionary([:]), codingPath: codingPath + [key], userInfo: userInfo)
    }
}

struct ValueUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let array: [DefaultsValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]
    private(set) var currentIndex = 0

    init(array: [DefaultsValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.array = array
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func nextDecoder(_ type: Any.Type) throws -> ValueDecoder {
        let path = codingPath + [ValueCodingKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(codingPath: path, debugDescription: "the array has only \(array.count) elements"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: array[currentIndex], codingPath: path, userInfo: userInfo)
    }

    private mutating func next<T: DefaultsValueConvertible>(_ type: T.Type, expected: String) throws -> T {
        try nextDecoder(type).convert(type, expected: expected)
    }

    // Arrays in a suite never hold null.
    mutating func decodeNil() throws -> Bool { false }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, expected: "boolean") }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, expected: "string") }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type, expected: "number") }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type, expected: "number") }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type, expected: "integer") }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type, expected: "integer in Int8 range") }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type, expected: "integer in Int16 range") }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type, expected: "integer in Int32 range") }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type, expected: "integer") }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type, expected: "non-negative integer") }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type, expected: "integer in UInt8 range") }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type, expected: "integer in UInt16 range") }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type, expected: "integer in UInt32 range") }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type, expected: "non-negative integer") }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try nextDecoder(type).decodeValue(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        try nextDecoder([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try nextDecoder([String: Any].self)
    }
}

struct ValueSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    // A value that exists is never null: nil is an absent key.
    func decodeNil() -> Bool { false }

    func decode(_ type: Bool.Type) throws -> Bool { try decoder.convert(type, expected: "boolean") }
    func decode(_ type: String.Type) throws -> String { try decoder.convert(type, expected: "string") }
    func decode(_ type: Double.Type) throws -> Double { try decoder.convert(type, expected: "number") }
    func decode(_ type: Float.Type) throws -> Float { try decoder.convert(type, expected: "number") }
    func decode(_ type: Int.Type) throws -> Int { try decoder.convert(type, expected: "integer") }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.convert(type, expected: "integer in Int8 range") }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.convert(type, expected: "integer in Int16 range") }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.convert(type, expected: "integer in Int32 range") }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.convert(type, expected: "integer") }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.convert(type, expected: "non-negative integer") }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.convert(type, expected: "integer in UInt8 range") }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.convert(type, expected: "integer in UInt16 range") }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.convert(type, expected: "integer in UInt32 range") }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.convert(type, expected: "non-negative integer") }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeValue(type)
    }
}
