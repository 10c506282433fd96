import Foundation

/// The kinds of value protobuf's wire format knows; the low three bits of every field's tag.
enum ProtobufWireType: UInt8, Sendable {
    /// An integer or boolean as a variable-length integer (7 bits a byte, least significant first).
    case varint = 0
    /// Eight bytes, little-endian.
    case fixed64 = 1
    /// A length (varint) and that many bytes: bytes, strings, nested messages, packed repeated numbers.
    case lengthDelimited = 2
    /// The start of a group (proto2's deprecated nesting): refused when read.
    case startGroup = 3
    /// The end of a group: refused when read.
    case endGroup = 4
    /// Four bytes, little-endian.
    case fixed32 = 5
}

/// Writes a protobuf message's fields, in the order the caller gives them (etcd's messages write them in
/// field-number order, as protobuf's own encoders do).
///
/// Scalar fields with their zero value are left out, as proto3 does for fields that are not in a `oneof`;
/// the `always` variants write a field whatever its value, for `oneof` members, whose presence is the
/// information (a compare of `mod_revision` 0 must put field 6 on the wire).
struct ProtobufWriter {
    /// What has been written so far.
    private(set) var bytes: [UInt8] = []

    init() {}

    /// A variable-length integer: 7 bits a byte, least significant first, the high bit set on all but the last.
    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A field's tag: its number and wire type.
    mutating func writeTag(_ field: Int, _ wireType: ProtobufWireType) {
        writeVarint(UInt64(field) << 3 | UInt64(wireType.rawValue))
    }

    /// An `int64` field (negative numbers take ten bytes, as protobuf writes them); left out when 0.
    mutating func int64(_ field: Int, _ value: Int64) {
        if value != 0 { int64(always: field, value) }
    }

    /// An `int64` field written even when 0 (a `oneof` member).
    mutating func int64(always field: Int, _ value: Int64) {
        writeTag(field, .varint)
        writeVarint(UInt64(bitPattern: value))
    }

    /// A `uint64` field; left out when 0.
    mutating func uint64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        writeTag(field, .varint)
        writeVarint(value)
    }

    /// An enum field (its number, sign-extended as protobuf writes `int32`s); left out when 0.
    mutating func enumeration(_ field: Int, _ value: Int32) {
        int64(field, Int64(value))
    }

    /// A `bool` field; left out when false.
    mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        writeTag(field, .varint)
        writeVarint(1)
    }

    /// A `bytes` field; left out when empty.
    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        if !value.isEmpty { bytes(always: field, value) }
    }

    /// A `bytes` field written even when empty (a `oneof` member).
    mutating func bytes(always field: Int, _ value: [UInt8]) {
        writeTag(field, .lengthDelimited)
        writeVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A `string` field (UTF-8); left out when empty.
    mutating func string(_ field: Int, _ value: String) {
        bytes(field, Array(value.utf8))
    }

    /// A `fixed64` field; left out when 0.
    mutating func fixed64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        writeTag(field, .fixed64)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `fixed32` field; left out when 0.
    mutating func fixed32(_ field: Int, _ value: UInt32) {
        guard value != 0 else { return }
        writeTag(field, .fixed32)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A packed repeated enum field (proto3's default for repeated numbers); left out when empty.
    mutating func packedEnumerations(_ field: Int, _ values: [Int32]) {
        guard !values.isEmpty else { return }
        var packed = ProtobufWriter()
        for value in values { packed.writeVarint(UInt64(bitPattern: Int64(value))) }
        bytes(always: field, packed.bytes)
    }

    /// A nested message field; left out when `nil`. An empty message that is present is written (as a
    /// tag and length 0): for `oneof` members and optional messages, presence is the information.
    mutating func message(_ field: Int, _ value: (some ProtobufMessage)?) {
        guard let value else { return }
        nested(field, value)
    }

    /// One entry of a repeated message field per element.
    mutating func messages(_ field: Int, _ values: [some ProtobufMessage]) {
        for value in values { nested(field, value) }
    }

    /// A nested message written in place: its length's varint is reserved as one byte (what a message of
    /// fewer than 128 bytes takes, as etcd's requests are) and widened after the fact for a longer one.
    private mutating func nested(_ field: Int, _ value: some ProtobufMessage) {
        writeTag(field, .lengthDelimited)
        let lengthAt = bytes.count
        bytes.append(0)
        value.encode(to: &self)
        let length = bytes.count - lengthAt - 1
        guard length >= 0x80 else {
            bytes[lengthAt] = UInt8(length)
            return
        }
        var prefix = ProtobufWriter()
        prefix.writeVarint(UInt64(length))
        bytes.replaceSubrange(lengthAt...lengthAt, with: prefix.bytes)
    }

    /// One entry of a repeated string field per element (empty strings included).
    mutating func strings(_ field: Int, _ values: [String]) {
        for value in values { bytes(always: field, Array(value.utf8)) }
    }
}
