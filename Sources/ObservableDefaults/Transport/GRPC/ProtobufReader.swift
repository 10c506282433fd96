import Foundation

/// Why bytes could not be read as a protobuf message: which message and field, where, and what was wrong.
struct ProtobufError: Error, Equatable, CustomStringConvertible {
    /// The message being read, by its protobuf name ("etcdserverpb.RangeResponse").
    var message: String
    /// The field being read (`nil`: the fault is in a tag, before a field is known).
    var field: Int?
    /// The field's name when it is one the reader knows ("kvs").
    var fieldName: String?
    /// The offset of the fault in the bytes given to the outermost decoder.
    var offset: Int
    /// What was wrong, and what was expected.
    var problem: String

    var description: String {
        var place = "protobuf message \(message)"
        if let field { place += ", field \(field)" + (fieldName.map { " (\($0))" } ?? "") }
        return "\(place) at byte \(offset): \(problem)"
    }
}

/// A protobuf message that the client writes or reads: etcd's requests and answers (``EtcdProto``).
protocol ProtobufMessage: Sendable, Equatable {
    /// The message's full protobuf name, for errors ("etcdserverpb.RangeRequest").
    static var protobufName: String { get }

    /// A message with every field at its zero value.
    init()

    /// Writes the message's fields in field-number order.
    func encode(to writer: inout ProtobufWriter)

    /// Reads the value of field `number` (tag already read, see ``ProtobufReader/wireType``), or skips it
    /// when the message has no such field.
    mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError)
}

extension ProtobufMessage {
    /// The message's bytes on the wire.
    func encoded() -> [UInt8] {
        var writer = ProtobufWriter()
        encode(to: &writer)
        return writer.bytes
    }

    /// The message's bytes on the wire, as `Data`.
    func encodedData() -> Data { Data(encoded()) }

    /// Reads a whole message from `bytes`; unknown fields are skipped, anything malformed throws.
    init(decoding bytes: [UInt8], limits: ProtobufReader.Limits = .standard) throws(ProtobufError) {
        var reader = ProtobufReader(bytes, limits: limits)
        self = try reader.readMessage(Self.self)
    }

    /// Reads a whole message from `data`.
    init(decoding data: Data, limits: ProtobufReader.Limits = .standard) throws(ProtobufError) {
        try self.init(decoding: [UInt8](data), limits: limits)
    }
}

/// Reads protobuf's wire format from bytes already in memory, checking everything against what remains:
/// a varint has at most 10 bytes, a length never reaches past the end of its enclosing message nor past
/// ``Limits/fieldBytes``, messages nest at most ``Limits/depth`` deep, groups are refused and unknown
/// fields skipped. Every fault is a ``ProtobufError`` naming the message, the field and the offset.
struct ProtobufReader {
    /// How much the reader accepts.
    struct Limits: Sendable, Equatable {
        /// The most bytes of one length-delimited field (a key, a value, a nested message).
        var fieldBytes: Int
        /// How deep messages may nest (the outermost message is depth 1). etcd's deepest answer is a
        /// transaction's nested transaction; protobuf's own limit is 100.
        var depth: Int
        /// The most nested messages one decode reads. A nested message costs 2 bytes on the wire and tens of
        /// bytes in memory, so this bounds what a small hostile answer can make the client allocate.
        var messages: Int

        /// Limits for answers of up to `answerBytes`: fields of up to that size, nesting 100 deep, and one
        /// nested message per 8 bytes (etcd's smallest key-value in a range answer takes 11).
        init(answerBytes: Int, depth: Int = 100) {
            self.init(fieldBytes: answerBytes, depth: depth, messages: max(1, answerBytes / 8))
        }

        init(fieldBytes: Int, depth: Int, messages: Int = .max) {
            self.fieldBytes = fieldBytes
            self.depth = depth
            self.messages = messages
        }

        /// The limits for answers of at most ``EtcdReadLimits/standard``'s size.
        static let standard = Limits(answerBytes: EtcdReadLimits.standard.answerBytes)
    }

    private let bytes: [UInt8]
    private let limits: Limits
    /// The next byte to read.
    private var position: Int
    /// Where the message being read ends.
    private var end: Int
    /// How deep the message being read is nested (1: the outermost).
    private var depth = 1
    /// How many nested messages this decode has read.
    private var messageCount = 0
    /// The message being read, for errors.
    private var messageName = ""
    /// The field whose tag was read last, and its wire type.
    private(set) var field = 0
    private(set) var wireType = ProtobufWireType.varint
    /// Where the field's tag began, for errors.
    private var fieldStart = 0

    init(_ bytes: [UInt8], limits: Limits = .standard) {
        self.bytes = bytes
        self.limits = limits
        self.position = 0
        self.end = bytes.count
    }

    /// Reads a whole message of type `M` from here to the end of the enclosing bytes.
    mutating func readMessage<M: ProtobufMessage>(_ type: M.Type) throws(ProtobufError) -> M {
        let outerName = messageName
        let outerField = (field, wireType, fieldStart)
        messageName = M.protobufName
        defer {
            messageName = outerName
            (field, wireType, fieldStart) = outerField
        }
        var message = M()
        while position < end {
            try readTag()
            try message.decodeField(field, from: &self)
        }
        return message
    }

    /// An error about the current field.
    func failure(_ problem: String, field name: String? = nil, at offset: Int? = nil) -> ProtobufError {
        ProtobufError(
            message: messageName, field: field == 0 ? nil : field, fieldName: name, offset: offset ?? fieldStart,
            problem: problem)
    }

    private mutating func readTag() throws(ProtobufError) {
        fieldStart = position
        field = 0
        let tag = try readVarint(nil)
        guard tag >> 3 >= 1, tag >> 3 <= 0x1FFF_FFFF else {
            throw failure("field number \(tag >> 3) in tag \(tag) is outside 1...536870911", at: fieldStart)
        }
        field = Int(tag >> 3)
        switch UInt8(tag & 7) {
        case 0: wireType = .varint
        case 1: wireType = .fixed64
        case 2: wireType = .lengthDelimited
        case 5: wireType = .fixed32
        case 3, 4: throw failure("groups (wire types 3 and 4) are not supported, found wire type \(tag & 7)")
        default: throw failure("wire type \(tag & 7) does not exist (expected 0, 1, 2 or 5)")
        }
    }

    private mutating func readVarint(_ name: String?) throws(ProtobufError) -> UInt64 {
        let start = position
        var value: UInt64 = 0
        for index in 0..<10 {
            guard position < end else {
                throw failure(
                    "a varint is cut off by the end of the message after \(index) bytes", field: name, at: start)
            }
            let byte = bytes[position]
            position += 1
            if index == 9, byte > 1 {
                throw failure("a varint does not fit in 64 bits (its 10th byte is \(byte))", field: name, at: start)
            }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return value }
        }
        throw failure("a varint is longer than 10 bytes", field: name, at: start)
    }

    private func expect(_ type: ProtobufWireType, _ name: String) throws(ProtobufError) {
        guard wireType == type else {
            throw failure(
                "expected wire type \(type.rawValue) (\(type)), found \(wireType.rawValue) (\(wireType))", field: name)
        }
    }

    /// The range of a length-delimited field's payload, checked against what remains and the limit.
    private mutating func readLength(_ name: String?) throws(ProtobufError) -> Range<Int> {
        let length = try readVarint(name)
        let left = end - position
        guard length <= UInt64(left) else {
            throw failure("length \(length) is more than the \(left) bytes left in the message", field: name)
        }
        guard length <= UInt64(limits.fieldBytes) else {
            throw failure(
                "length \(length) is more than the \(EtcdReadLimits.describe(limits.fieldBytes)) a field may have",
                field: name)
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    /// Skips the current field's value (a field this client does not know).
    mutating func skipField() throws(ProtobufError) {
        switch wireType {
        case .varint: _ = try readVarint(nil)
        case .fixed64: _ = try readFixed(8, nil)
        case .fixed32: _ = try readFixed(4, nil)
        case .lengthDelimited: _ = try readLength(nil)
        case .startGroup, .endGroup: throw failure("groups are not supported")
        }
    }

    private mutating func readFixed(_ count: Int, _ name: String?) throws(ProtobufError) -> UInt64 {
        guard end - position >= count else {
            throw failure("\(count) bytes expected, \(end - position) left in the message", field: name)
        }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += count
        return value
    }

    /// The current field as an `int64`.
    mutating func int64(_ name: String) throws(ProtobufError) -> Int64 {
        try expect(.varint, name)
        return Int64(bitPattern: try readVarint(name))
    }

    /// The current field as a `uint64`.
    mutating func uint64(_ name: String) throws(ProtobufError) -> UInt64 {
        try expect(.varint, name)
        return try readVarint(name)
    }

    /// The current field as an enum's number (an `int32`: the varint's low 32 bits, as protobuf reads it).
    mutating func enumeration(_ name: String) throws(ProtobufError) -> Int32 {
        try expect(.varint, name)
        return Int32(truncatingIfNeeded: try readVarint(name))
    }

    /// The current field as a `bool` (any non-zero varint is true).
    mutating func bool(_ name: String) throws(ProtobufError) -> Bool {
        try expect(.varint, name)
        return try readVarint(name) != 0
    }

    /// The current field as `bytes`.
    mutating func bytes(_ name: String) throws(ProtobufError) -> [UInt8] {
        try expect(.lengthDelimited, name)
        return Array(bytes[try readLength(name)])
    }

    /// The current field as a `string`, which must be UTF-8.
    mutating func string(_ name: String) throws(ProtobufError) -> String {
        try expect(.lengthDelimited, name)
        let start = position
        guard let text = String(validating: bytes[try readLength(name)], as: UTF8.self) else {
            throw failure("the string is not valid UTF-8", field: name, at: start)
        }
        return text
    }

    /// The current field as a nested message of type `M`.
    mutating func message<M: ProtobufMessage>(_ name: String, _ type: M.Type) throws(ProtobufError) -> M {
        try expect(.lengthDelimited, name)
        guard depth < limits.depth else {
            throw failure("messages are nested more than \(limits.depth) deep", field: name)
        }
        guard messageCount < limits.messages else {
            throw failure("the message holds more than \(limits.messages) nested messages", field: name)
        }
        messageCount += 1
        let range = try readLength(name)
        let outerEnd = end
        end = range.upperBound
        position = range.lowerBound
        depth += 1
        defer {
            depth -= 1
            end = outerEnd
        }
        let message = try readMessage(M.self)
        return message
    }

    /// Appends the current field's enum numbers to `values`: one number, or a packed run of them (proto3
    /// writes repeated numbers packed; a reader must take both forms).
    mutating func enumerations(_ name: String, into values: inout [Int32]) throws(ProtobufError) {
        if wireType == .varint {
            values.append(try enumeration(name))
            return
        }
        try expect(.lengthDelimited, name)
        let range = try readLength(name)
        let outerEnd = end
        (position, end) = (range.lowerBound, range.upperBound)
        defer { end = outerEnd }
        while position < end { values.append(Int32(truncatingIfNeeded: try readVarint(name))) }
    }
}
