import Foundation

/// gRPC's message framing on an HTTP/2 stream's body: each message is a 1-byte compressed flag, its length
/// as 4 bytes big-endian, and its protobuf bytes.
enum GRPCFraming {
    /// The bytes of a frame: `message`, uncompressed.
    static func frame(_ message: [UInt8]) -> Data {
        var data = Data(capacity: 5 + message.count)
        let length = UInt32(truncatingIfNeeded: message.count)
        data.append(contentsOf: [
            0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)
        ])
        data.append(contentsOf: message)
        return data
    }

    /// ``frame(_:)`` as bytes.
    static func frameBytes(_ message: [UInt8]) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: message.count)
        var bytes: [UInt8] = [
            0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)
        ]
        bytes.reserveCapacity(5 + message.count)
        bytes += message
        return bytes
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
        var messages: [[UInt8]] = []
        var input = data[...]
        while !input.isEmpty {
            // Until the prefix is checked, take only what completes the prefix.
            let taken = input.prefix((expected.map { 5 + $0 } ?? 5) - buffer.count)
            buffer.append(contentsOf: taken)
            input = input.dropFirst(taken.count)
            if expected == nil {
                guard buffer.count == 5 else { break }
                expected = try checkPrefix()
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
    private func checkPrefix() throws(GRPCFailure) -> Int {
        let flag = buffer[0]
        let length =
            Int(buffer[1]) << 24 | Int(buffer[2]) << 16 | Int(buffer[3]) << 8
            | Int(buffer[4])
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
