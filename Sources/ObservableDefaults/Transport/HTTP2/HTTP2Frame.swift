import Foundation

/// One HTTP/2 frame (RFC 9113, 4.1): its type, flags, stream and payload.
struct HTTP2Frame: Equatable {
    /// The frame type (``data``, ``headers``, …).
    var type: UInt8
    /// The flags (``endStream``, ``endHeaders``, …).
    var flags: UInt8 = 0
    /// The stream identifier (0: the connection).
    var stream: UInt32
    /// The payload, padding included.
    var payload: [UInt8] = []

    // Frame types (RFC 9113, 6).
    /// The frame types (RFC 9113, 6).
    static let data: UInt8 = 0x0, headers: UInt8 = 0x1, priority: UInt8 = 0x2, resetStream: UInt8 = 0x3
    static let settings: UInt8 = 0x4, pushPromise: UInt8 = 0x5, ping: UInt8 = 0x6, goAway: UInt8 = 0x7
    static let windowUpdate: UInt8 = 0x8, continuation: UInt8 = 0x9

    // Flags.
    /// The flags: END_STREAM (DATA, HEADERS) and ACK (SETTINGS, PING) share a bit; END_HEADERS,
    /// PADDED, PRIORITY.
    static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8
    static let priorityFlag: UInt8 = 0x20

    /// The size of a frame's header.
    static let headerSize = 9
    /// The smallest SETTINGS_MAX_FRAME_SIZE, the initial one.
    static let defaultMaximumSize = 16384

    /// The client connection preface (RFC 9113, 3.4), sent before the first SETTINGS.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Whether `flag` is set.
    func has(_ flag: UInt8) -> Bool { flags & flag != 0 }

    /// The frame as bytes on the wire.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + payload.count)
        append(to: &bytes)
        return bytes
    }

    /// Appends the frame as bytes on the wire to `bytes`.
    func append(to bytes: inout [UInt8]) {
        Self.appendHead(length: payload.count, type: type, flags: flags, stream: stream, to: &bytes)
        bytes.append(contentsOf: payload)
    }

    /// Appends the 9-byte head of a frame whose payload of `length` bytes the caller appends next.
    static func appendHead(length: Int, type: UInt8, flags: UInt8, stream: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: length >> 16))
        bytes.append(UInt8(truncatingIfNeeded: length >> 8))
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes.append(type)
        bytes.append(flags)
        append32(stream & 0x7FFF_FFFF, to: &bytes)
    }

    /// Appends `value` as 4 bytes, most significant first.
    static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// The 4 bytes of `bytes` from `offset` as a number, most significant first (fewer when `bytes`
    /// ends sooner: callers check lengths first).
    static func read32<Bytes: Collection<UInt8>>(_ bytes: Bytes, at offset: Int) -> UInt32 {
        let start = bytes.index(bytes.startIndex, offsetBy: offset)
        return bytes[start...].prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The payload without its padding (DATA, HEADERS and PUSH_PROMISE with PADDED), or a description of
    /// why the padding is invalid.
    func unpadded() throws(HTTP2ProtocolError) -> ArraySlice<UInt8> {
        guard has(Self.padded) else { return payload[...] }
        guard let padLength = payload.first, Int(padLength) < payload.count else {
            throw HTTP2ProtocolError(
                "a \(Self.name(of: type)) frame whose padding (\(payload.first.map { "\($0) bytes" } ?? "no length")) does not fit its \(payload.count)-byte payload"
            )
        }
        return payload[1..<(payload.count - Int(padLength))]
    }

    /// A frame type's name for messages.
    static func name(of type: UInt8) -> String {
        switch type {
        case data: "DATA"
        case headers: "HEADERS"
        case priority: "PRIORITY"
        case resetStream: "RST_STREAM"
        case settings: "SETTINGS"
        case pushPromise: "PUSH_PROMISE"
        case ping: "PING"
        case goAway: "GOAWAY"
        case windowUpdate: "WINDOW_UPDATE"
        case continuation: "CONTINUATION"
        default: "type \(type)"
        }
    }
}

/// A connection error (RFC 9113, 5.4.1): the peer broke HTTP/2's rules or one of the client's limits;
/// `code` is sent in the client's GOAWAY. `text` says what was received and, where it helps, what was
/// expected.
struct HTTP2ProtocolError: Error, Equatable {
    /// What the peer sent, and what was expected.
    let text: String
    /// The error code of the GOAWAY the client sends.
    var code: UInt32 = HTTP2ErrorCode.protocolError
    /// Set when `text` names something over this limit of the client's, in bytes.
    var sizeLimit: Int?
    /// An error saying `text`, sent as `code`.
    init(_ text: String, code: UInt32 = HTTP2ErrorCode.protocolError) {
        self.text = text
        self.code = code
    }
}

/// HTTP/2 error codes (RFC 9113, 7).
enum HTTP2ErrorCode {
    /// The codes, named as in the RFC.
    static let noError: UInt32 = 0x0, protocolError: UInt32 = 0x1, internalError: UInt32 = 0x2
    static let flowControlError: UInt32 = 0x3, settingsTimeout: UInt32 = 0x4, streamClosed: UInt32 = 0x5
    static let frameSizeError: UInt32 = 0x6, refusedStream: UInt32 = 0x7, cancel: UInt32 = 0x8
    static let compressionError: UInt32 = 0x9, connectError: UInt32 = 0xA, enhanceYourCalm: UInt32 = 0xB
    static let inadequateSecurity: UInt32 = 0xC, http11Required: UInt32 = 0xD

    /// The code's name, `REFUSED_STREAM`, or its number for an unknown one.
    static func name(_ code: UInt32) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"
        ]
        return code < names.count ? names[Int(code)] : "error code 0x\(String(code, radix: 16))"
    }
}

/// Splits received bytes into frames, refusing any larger than the size the client advertised
/// (SETTINGS_MAX_FRAME_SIZE): at most one frame plus one read is ever buffered.
struct HTTP2FrameReader {
    /// The largest payload accepted.
    let maximumSize: Int
    private var buffer: [UInt8] = []
    private var position = 0

    /// A reader accepting payloads of up to `maximumSize` bytes.
    init(maximumSize: Int = HTTP2Frame.defaultMaximumSize) { self.maximumSize = maximumSize }

    /// Bytes received but not yet returned as frames.
    var bufferedCount: Int { buffer.count - position }

    /// Up to `count` of the bytes not yet returned as frames.
    func peek(_ count: Int) -> ArraySlice<UInt8> { buffer[position..<min(buffer.count, position + count)] }

    /// Takes in bytes as they were received.
    mutating func append<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        if position > 0, position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position >= 65536 {
            buffer.removeSubrange(..<position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, `nil` when more bytes are needed; throws for a frame above the size limit
    /// (as soon as its header arrived, before its payload is kept).
    mutating func next() throws(HTTP2ProtocolError) -> HTTP2Frame? {
        guard buffer.count - position >= HTTP2Frame.headerSize else { return nil }
        let length = Int(buffer[position]) << 16 | Int(buffer[position + 1]) << 8 | Int(buffer[position + 2])
        let type = buffer[position + 3]
        guard length <= maximumSize else {
            var error = HTTP2ProtocolError(
                "a \(HTTP2Frame.name(of: type)) frame of \(length) bytes", code: HTTP2ErrorCode.frameSizeError)
            error.sizeLimit = maximumSize
            throw error
        }
        guard buffer.count - position >= HTTP2Frame.headerSize + length else { return nil }
        let start = position + HTTP2Frame.headerSize
        let frame = HTTP2Frame(
            type: type, flags: buffer[position + 4],
            stream: HTTP2Frame.read32(buffer, at: position + 5) & 0x7FFF_FFFF,
            payload: Array(buffer[start..<start + length]))
        position = start + length
        return frame
    }
}
