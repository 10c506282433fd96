import Foundation

/// gRPC's message framing on an HTTP/2 stream's body: each message is a 1-byte compressed flag, its length
/// as 4 bytes big-endian, and its protobuf bytes.
enum GRPCFraming {
    /// The bytes of a frame: `message`, uncompressed.
    static func frame(_ message: [UInt8]) -> Data {
        var data = Data(capacity: 5 + message.count)
        data.append(contentsOf: prefix(of: message))
        data.append(contentsOf: message)
        return data
    }

    /// ``frame(_:)`` as bytes.
    static func frameBytes(_ message: [UInt8]) -> [UInt8] {
        var bytes = prefix(of: message)
        bytes.reserveCapacity(5 + message.count)
        bytes += message
        return bytes
    }

    /// The 5-byte prefix of `message`: uncompressed, and its length.
    private static func prefix(of message: [UInt8]) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: message.count)
        return [0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    }
}

/// Cuts an answer's body into gRPC messages however the DATA frames split or pack them. A message's
/// prefix is checked as soon as its 5 bytes are in: a compressed message is refused (the client never
/// offers compression), and so is a length over the limit, before any of that message is kept — so a
/// member can never make the client hold more than the limit and a frame's worth of bytes.
struct GRPCMessageReader {
    /// The most bytes of one message (``EtcdReadLimits/answerBytes``).
    let limit: Int
    /// The bytes of the message being received, its prefix first.
    private var buffer: [UInt8] = []
    /// The length of the message being received, once its prefix is in and checked.
    private var expected: Int?

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether part of a message has arrived and not the rest (an answer ending here is cut off).
    var isInsideMessage: Bool { !buffer.isEmpty }

    /// What the unfinished message holds, for errors ("3 of the 12 bytes of a message").
    var unfinishedDescription: String {
        if let expected { return "\(buffer.count - 5) of the \(expected) bytes of a message" }
        return "\(buffer.count) of the 5 bytes of a message's prefix"
    }

    /// Takes `data` and returns the messages it completes, in order.
    mutating func append(_ data: some Collection<UInt8>) throws(GRPCFailure) -> [[UInt8]] {
        // Read through a pointer: `Data`'s own indexing costs a call per byte.
        let result = data.withContiguousStorageIfAvailable { bytes in
            Result { () throws(GRPCFailure) in try append(bytes[...]) }
        }
        if let result { return try result.get() }
        let bytes = Array(data)
        return try bytes.withUnsafeBufferPointer { bytes throws(GRPCFailure) in try append(bytes[...]) }
    }

    private mutating func append(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) throws(GRPCFailure) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var input = bytes
        // Whole messages at the start of `bytes` (an etcd answer's usual DATA frame) are taken without passing
        // through the buffer.
        while buffer.isEmpty, input.count >= 5 {
            let length = try Self.checkPrefix(input.prefix(5), limit: limit)
            let body = input.dropFirst(5)
            guard body.count >= length else { break }
            messages.append(Array(body.prefix(length)))
            input = body.dropFirst(length)
        }
        while !input.isEmpty {
            // Until the prefix is checked, take only what completes the prefix.
            let taken = input.prefix((expected.map { 5 + $0 } ?? 5) - buffer.count)
            buffer.append(contentsOf: taken)
            input = input.dropFirst(taken.count)
            if expected == nil {
                guard buffer.count == 5 else { break }
                expected = try Self.checkPrefix(buffer, limit: limit)
            }
            if let length = expected, buffer.count == 5 + length {
                messages.append(Array(buffer[5...]))
                expected = nil
                buffer.removeAll(keepingCapacity: buffer.capacity <= 64 << 10)
            }
        }
        return messages
    }

    /// The length in the message's 5-byte prefix, after checking its flag and the limit.
    private static func checkPrefix(_ prefix: some Collection<UInt8>, limit: Int) throws(GRPCFailure) -> Int {
        var bytes = prefix.makeIterator()
        let flag = bytes.next() ?? 0
        var length = 0
        for _ in 0..<4 { length = length << 8 | Int(bytes.next() ?? 0) }
        guard flag == 0 else {
            if flag == 1 {
                throw .malformed(
                    "a compressed gRPC message (\(length) bytes), though the client offered no compression")
            }
            throw .malformed("a gRPC message whose compressed flag is \(flag) (expected 0)")
        }
        guard length <= limit else {
            throw .transport(
                .tooLarge(
                    "a gRPC message", limit: limit, "its prefix announces \(length) bytes", kind: "gRPC messages"))
        }
        return length
    }
}
