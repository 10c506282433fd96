import Foundation

/// Encodes an `Encodable` value into a ``DefaultsValue`` tree, so a Codable type is stored as a natural,
/// hand-editable structure rather than opaque bytes.
///
/// Keyed containers become `.dictionary`, unkeyed containers `.array`; `String`, `Bool`, integers and
/// floating-point numbers become the matching case (an unsigned value above `Int.max` becomes its
/// decimal `.string`, as in ``DefaultsValueConvertible``, so it stays exact);
/// `Date` becomes `.date`, `Data` `.data`, `URL` a `.string` of its `absoluteString`. A `nil` encoded
/// for a key leaves the key out; `nil` inside an array, or as the whole value, cannot be stored and
/// throws `EncodingError.invalidValue`.
public struct DefaultsValueEncoder: Sendable {
    /// Values the encoded types can read through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder.
    public init() {}

    /// Encodes a value into its tree.
    public func encode<T: Encodable>(_ value: T) throws -> DefaultsValue {
        let node = try EncodingNode.encoding(value, codingPath: [], userInfo: userInfo)
        guard let result = try node.resolve(codingPath: []) else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: [], debugDescription: "nil cannot be stored as a whole value"))
        }
        return result
    }
}

/// A value under construction: containers are filled in after they are handed out, so they are
/// reference-typed until ``resolve(codingPath:)`` turns them into a ``DefaultsValue``.
final class EncodingNode {
    enum Content {
        case unset
        case null
        case value(DefaultsValue)
        case keyed([String: EncodingNode])
        case unkeyed([EncodingNode])
    }

    var content: Content = .unset

    init(_ content: Content = .unset) { self.content = content }

    /// Encodes a value, storing the types with a direct representation as themselves.
    static func encoding<T: Encodable>(
        _ value: T, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]
    ) throws -> EncodingNode {
        if let direct = directValue(value) { return EncodingNode(.value(direct)) }
        // Only values inside containers this deep get here; refusing them stops a recursive type before
        // it overflows the stack (``resolve(codingPath:)`` refuses the containers themselves).
        if codingPath.count > DefaultsValueLimits.maximumValueDepth { throw tooDeep(value, codingPath) }
        let node = EncodingNode()
        try value.encode(to: ValueEncoder(node: node, codingPath: codingPath, userInfo: userInfo))
        return node
    }

    private static func directValue(_ value: Any) -> DefaultsValue? {
        switch value {
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let url as URL: return .string(url.absoluteString)
        default: return nil
        }
    }

    /// The error for a value nested deeper than a suite file can hold.
    static func tooDeep(_ value: Any, _ codingPath: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: codingPath,
                debugDescription:
                    "containers are nested more than \(DefaultsValueLimits.maximumValueDepth) levels deep, more than a suite file can hold"
            ))
    }

    /// The finished value; `nil` for an encoded `nil`.
    func resolve(codingPath: [any CodingKey]) throws -> DefaultsValue? {
        switch content {
        case .keyed where codingPath.count >= DefaultsValueLimits.maximumValueDepth,
            .unkeyed where codingPath.count >= DefaultsValueLimits.maximumValueDepth:
            throw Self.tooDeep(self, codingPath)
        case .unset: return .dictionary([:])
        case .null: return nil
        case .value(let value): return value
        case .keyed(let children):
            var dictionary: [String: DefaultsValue] = [:]
            dictionary.reserveCapacity(children.count)
            for (key, child) in children {
                if let value = try child.resolve(codingPath: codingPath + [ValueCodingKey(key)]) {
                    dictionary[key] = value
                }
            }
            return .dictionary(dictionary)
        case .unkeyed(let children):
            var array: [DefaultsValue] = []
            array.reserveCapacity(children.count)
            for (index, child) in children.enumerated() {
                let path = codingPath + [ValueCodingKey(index)]
                guard let value = try child.resolve(codingPath: path) else {
                    throw EncodingError.invalidValue(
                        Optional<Int>.none as Any,
                        EncodingError.Context(codingPath: path, debugDescription: "nil cannot be stored in an array"))
                }
                array.append(value)
            }
            return .array(array)
        }
    }

    /// Turns this node into a keyed container's storage, keeping what a previous container stored.
    func makeKeyed() {
        if case .keyed = content { return }
        content = .keyed([:])
    }

    /// Turns this node into an unkeyed container's storage, keeping what a previous container stored.
    func makeUnkeyed() {
        if case .unkeyed = content { return }
        content = .unkeyed([])
    }

    func set(_ child: EncodingNode, forKey key: String) {
        guard case .keyed(var children) = content else { return }
        content = .unset  // keeps `children` uniquely referenced while it is modified
        children[key] = child
        content = .keyed(children)
    }

    func append(_ child: EncodingNode) {
        guard case .unkeyed(var children) = content else { return }
        content = .unset
        children.append(child)
        content = .unkeyed(children)
    }

    var unkeyedCount: Int {
        if case .unkeyed(let children) = content { return children.count }
        return 0
    }

    var keyedCount: Int {
        if case .keyed(let children) = content { return children.count }
        return 0
    }
}

/// A coding key for dictionary entries and array positions in coding paths.
struct ValueCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(_ index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(intValue) }

    static let superKey = ValueCodingKey("super")
}

/// The `Encoder` handed to `encode(to:)`.
struct ValueEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let options: [CodingUserInfoKey: any Sendable]

    init(node: EncodingNode, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.node = node
        self.codingPath = codingPath
        self.options = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { options }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeKeyed()
        return KeyedEncodingContainer(
            ValueKeyedEncodingContainer<Key>(node: node, codingPath: codingPath, userInfo: options))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeUnkeyed()
        return ValueUnkeyedEncodingContainer(node: node, codingPath: codingPath, userInfo: options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ValueSingleValueEncodingContainer(node: node, codingPath: codingPath, userInfo: options)
    }
}

struct ValueKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    private func store(_ value: DefaultsValue, _ key: Key) {
        node.set(EncodingNode(.value(value)), forKey: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { node.set(EncodingNode(.null), forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { store(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { store(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { store(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { store(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { store(.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { store(.integer(Int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { store(value.defaultsValue, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { store(value.defaultsValue, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.set(
            try EncodingNode.encoding(value, codingPath: codingPath + [key], userInfo: userInfo),
            forKey: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode(.keyed([:]))
        node.set(child, forKey: key.stringValue)
        return KeyedEncodingContainer(
            ValueKeyedEncodingContainer<NestedKey>(node: child, codingPath: codingPath + [key], userInfo: userInfo))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode(.unkeyed([]))
        node.set(child, forKey: key.stringValue)
        return ValueUnkeyedEncodingContainer(node: child, codingPath: codingPath + [key], userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: ValueCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(forKey: key as any CodingKey)
    }

    private func superEncoder(forKey key: any CodingKey) -> any Encoder {
        let child = EncodingNode()
        node.set(child, forKey: key.stringValue)
        return ValueEncoder(node: child, codingPath: codingPath + [key], userInfo: userInfo)
    }
}

struct ValueUnkeyedEncodingContainer: UnkeyedEncodingContainer, ValueStoringEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var count: Int { node.unkeyedCount }

    /// The path of the next element.
    var valuePath: [any CodingKey] { codingPath + [ValueCodingKey(count)] }
    func store(_ value: DefaultsValue) { node.append(EncodingNode(.value(value))) }
    func store(_ child: EncodingNode) { node.append(child) }

    mutating func encodeNil() throws {
        throw EncodingError.invalidValue(
            Optional<Int>.none as Any,
            EncodingError.Context(codingPath: valuePath, debugDescription: "nil cannot be stored in an array"))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let path = valuePath
        let child = EncodingNode(.keyed([:]))
        node.append(child)
        return KeyedEncodingContainer(
            ValueKeyedEncodingContainer<NestedKey>(node: child, codingPath: path, userInfo: userInfo))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = valuePath
        let child = EncodingNode(.unkeyed([]))
        node.append(child)
        return ValueUnkeyedEncodingContainer(node: child, codingPath: path, userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder {
        let path = valuePath
        let child = EncodingNode()
        node.append(child)
        return ValueEncoder(node: child, codingPath: path, userInfo: userInfo)
    }
}

struct ValueSingleValueEncodingContainer: SingleValueEncodingContainer, ValueStoringEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    /// The path of the value: this container's own.
    var valuePath: [any CodingKey] { codingPath }
    func store(_ value: DefaultsValue) { node.content = .value(value) }
    func store(_ child: EncodingNode) { node.content = child.content }

    mutating func encodeNil() throws { node.content = .null }
}
