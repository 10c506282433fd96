/// An encoding container that stores each value it is given as one node: the unkeyed container appends
/// it, the single-value container becomes it. Their `encode` methods are otherwise the same, so they are
/// written once, in the extension below.
protocol ValueStoringEncodingContainer {
    var userInfo: [CodingUserInfoKey: any Sendable] { get }
    /// The coding path of the value being encoded.
    var valuePath: [any CodingKey] { get }
    /// Stores a value with a direct representation.
    func store(_ value: DefaultsValue)
    /// Stores an encoded node.
    func store(_ child: EncodingNode)
}

extension ValueStoringEncodingContainer {
    mutating func encode(_ value: Bool) throws { store(.bool(value)) }
    mutating func encode(_ value: String) throws { store(.string(value)) }
    mutating func encode(_ value: Double) throws { store(.double(value)) }
    mutating func encode(_ value: Float) throws { store(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { store(.integer(value)) }
    mutating func encode(_ value: Int8) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: Int16) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: Int32) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: Int64) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: UInt8) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: UInt16) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: UInt32) throws { store(.integer(Int(value))) }
    mutating func encode(_ value: UInt) throws { store(value.defaultsValue) }
    mutating func encode(_ value: UInt64) throws { store(value.defaultsValue) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        store(try EncodingNode.encoding(value, codingPath: valuePath, userInfo: userInfo))
    }
}
