import Foundation
import Synchronization

/// The gRPC floor of the cloud group: etcd's native protocol spoken over a plain socket by hand, no library
/// code — HTTP/2 with prior knowledge, headers written with HPACK literals (the answers' headers are never
/// decoded: a floor needs only the DATA of its stream), gRPC's length prefix and the few protobuf fields
/// the benchmark reads and writes. ``EtcdGRPCRawSwapper`` sends the library's compare-and-swap transaction;
/// ``EtcdGRPCRawWatch`` reads Watch streams (one per connection, many on one, or many watches on one stream). One
/// key, integer values, a loopback IPv4 member.
enum EtcdGRPCRaw {
    enum FrameType: UInt8 {
        case data = 0, headers = 1, rstStream = 3, settings = 4, ping = 6, goAway = 7, windowUpdate = 8
    }

    static let endStream: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let ack: UInt8 = 0x1
    /// The largest window HTTP/2 allows: the floor never has to grant flow control back.
    static let largestWindow: UInt32 = 0x7fff_ffff

    /// A frame's bytes: the 9-byte head, then `payload`.
    static func frame(_ type: FrameType, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type.rawValue, flags]
            + bigEndian(stream) + payload
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// The request headers of a gRPC call to `path`, as HPACK literals that touch no dynamic table.
    static func requestHeaders(path: String, authority: String) -> [UInt8] {
        func literal(_ text: String) -> [UInt8] { [UInt8(text.utf8.count)] + Array(text.utf8) }
        return [0x83, 0x86]  // :method POST, :scheme http (static table 3 and 6)
            + [0x04] + literal(path)  // :path, name from static table 4, not indexed
            + [0x01] + literal(authority)  // :authority (1)
            + [0x0f, 0x10] + literal("application/grpc")  // content-type (31)
            + [0x00] + literal("te") + literal("trailers")
    }

    /// One gRPC message: uncompressed, its length, the protobuf bytes.
    static func message(_ protobuf: [UInt8]) -> [UInt8] { [0] + bigEndian(UInt32(protobuf.count)) + protobuf }

    // MARK: Protobuf, only what the floor needs

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }

    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    /// A message's fields in order: each number with its varint value or its bytes (other wire types end the
    /// walk: etcd's messages the floor reads have none).
    static func fields(_ bytes: ArraySlice<UInt8>) -> [(number: UInt64, varint: UInt64, bytes: ArraySlice<UInt8>)] {
        var result: [(number: UInt64, varint: UInt64, bytes: ArraySlice<UInt8>)] = []
        var index = bytes.startIndex
        func readVarint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        while index < bytes.endIndex, let tag = readVarint() {
            switch tag & 7 {
            case 0:
                guard let value = readVarint() else { return result }
                result.append((tag >> 3, value, []))
            case 2:
                guard let length = readVarint(), length <= UInt64(bytes.endIndex - index) else { return result }
                let end = index + Int(length)
                result.append((tag >> 3, 0, bytes[index..<end]))
                index = end
            default:
                return result
            }
        }
        return result
    }
}

/// One HTTP/2 connection to an etcd member with prior knowledge: the preface and settings on connecting,
/// frames written whole, frames read one at a time (answering the peer's SETTINGS and PING on the way).
final class EtcdGRPCRawConnection {
    let socket: GatewaySocket
    let endpoint: URL
    private var buffer: [UInt8] = []
    private var nextStream: UInt32 = 1

    init(endpoint: URL) throws {
        self.endpoint = endpoint
        socket = try GatewaySocket(endpoint)
        let initialWindow: [UInt8] = [0x00, 0x04] + EtcdGRPCRaw.bigEndian(EtcdGRPCRaw.largestWindow)
        try socket.send(
            Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + EtcdGRPCRaw.frame(.settings, initialWindow)
                + EtcdGRPCRaw.frame(.windowUpdate, EtcdGRPCRaw.bigEndian(EtcdGRPCRaw.largestWindow - 65_535)))
    }

    var authority: String { "\(endpoint.host ?? "127.0.0.1"):\(endpoint.port ?? 2379)" }

    /// Opens a stream calling `path` with `request` (one protobuf message); `endsStream` half-closes it (a
    /// unary call). Returns the stream's identifier.
    func call(_ path: String, request: [UInt8], endsStream: Bool) throws -> UInt32 {
        let stream = nextStream
        nextStream += 2
        let headers = EtcdGRPCRaw.requestHeaders(path: path, authority: authority)
        try socket.send(
            EtcdGRPCRaw.frame(.headers, flags: EtcdGRPCRaw.endHeaders, stream: stream, headers)
                + EtcdGRPCRaw.frame(
                    .data, flags: endsStream ? EtcdGRPCRaw.endStream : 0, stream: stream, EtcdGRPCRaw.message(request)))
        return stream
    }

    /// Sends `request` (one protobuf message) on `stream`, opened by ``call(_:request:endsStream:)`` and not
    /// half-closed.
    func send(_ request: [UInt8], on stream: UInt32) throws {
        try socket.send(EtcdGRPCRaw.frame(.data, stream: stream, EtcdGRPCRaw.message(request)))
    }

    /// The next frame that is not connection housekeeping, waiting at most `timeoutMilliseconds` for each
    /// read (-1: forever); `nil` when the connection ended or the time ran out.
    func nextFrame(timeoutMilliseconds: Int32) throws -> (type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])?
    {
        while true {
            if buffer.count >= 9 {
                let length = Int(buffer[0]) << 16 | Int(buffer[1]) << 8 | Int(buffer[2])
                if buffer.count >= 9 + length {
                    let type = buffer[3], flags = buffer[4]
                    let stream =
                        (UInt32(buffer[5]) << 24 | UInt32(buffer[6]) << 16 | UInt32(buffer[7]) << 8
                            | UInt32(buffer[8])) & 0x7fff_ffff
                    let payload = Array(buffer[9..<(9 + length)])
                    buffer.removeFirst(9 + length)
                    switch EtcdGRPCRaw.FrameType(rawValue: type) {
                    case .settings where flags & EtcdGRPCRaw.ack == 0:
                        try socket.send(EtcdGRPCRaw.frame(.settings, flags: EtcdGRPCRaw.ack))
                    case .ping where flags & EtcdGRPCRaw.ack == 0:
                        try socket.send(EtcdGRPCRaw.frame(.ping, flags: EtcdGRPCRaw.ack, payload))
                    case .goAway:
                        throw EtcdGatewayError("\(endpoint.absoluteString) sent GOAWAY")
                    case .settings, .ping, .windowUpdate:
                        break
                    default:
                        return (type, flags, stream, payload)
                    }
                    continue
                }
            }
            guard socket.receive(into: &buffer, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        }
    }
}

/// Writes integer values to one key as the library uploads — each a `KV/Txn` compare-and-swap on the key's
/// modification revision — over one HTTP/2 connection, one call at a time. The revision is tracked from the
/// answers; a refused swap fails, so a conflict is never mistaken for a write.
final class EtcdGRPCRawSwapper {
    private let connection: EtcdGRPCRawConnection
    private let key: String
    /// The key's modification revision as this writer last saw it (0: absent).
    private(set) var revision: UInt64 = 0

    init(endpoint: URL, key: String) throws {
        connection = try EtcdGRPCRawConnection(endpoint: endpoint)
        self.key = key
    }

    /// `TxnRequest`: compare the key's `mod_revision` with `expected`, then put `value`.
    private func request(value: Int, expected: UInt64) -> [UInt8] {
        let key = Array(key.utf8)
        let compare =
            EtcdGRPCRaw.field(2, varint: 2) + EtcdGRPCRaw.field(3, bytes: key) + EtcdGRPCRaw.field(6, varint: expected)
        let put = EtcdGRPCRaw.field(1, bytes: key) + EtcdGRPCRaw.field(2, bytes: Array(String(value).utf8))
        return EtcdGRPCRaw.field(1, bytes: compare) + EtcdGRPCRaw.field(2, bytes: EtcdGRPCRaw.field(2, bytes: put))
    }

    func swap(_ value: Int) throws {
        let stream = try connection.call(
            "/etcdserverpb.KV/Txn", request: request(value: value, expected: revision), endsStream: true)
        var answer: [UInt8] = []
        while true {
            guard let frame = try connection.nextFrame(timeoutMilliseconds: 10_000) else {
                throw EtcdGatewayError("Txn on \(key) at \(connection.endpoint.absoluteString): no answer within 10 s")
            }
            guard frame.stream == stream else { continue }
            if frame.type == EtcdGRPCRaw.FrameType.rstStream.rawValue {
                throw EtcdGatewayError("Txn on \(key): the stream was reset")
            }
            if frame.type == EtcdGRPCRaw.FrameType.data.rawValue { answer += frame.payload }
            if frame.flags & EtcdGRPCRaw.endStream != 0 { break }
        }
        guard answer.count > 5 else { throw EtcdGatewayError("Txn on \(key): an answer without a message") }
        let fields = EtcdGRPCRaw.fields(answer[5...])
        guard fields.contains(where: { $0.number == 2 && $0.varint == 1 }) else {
            throw EtcdGatewayError("Txn on \(key) refused: its modification revision is no longer \(revision)")
        }
        guard let header = fields.first(where: { $0.number == 1 }),
            let written = EtcdGRPCRaw.fields(header.bytes).first(where: { $0.number == 3 })
        else { throw EtcdGatewayError("Txn on \(key): an answer without a header revision") }
        revision = written.varint
    }
}

/// Reads etcd watches of one key over one HTTP/2 connection on a thread of its own and hands every integer
/// value of every event of every watch to `onValue`, as soon as its message is complete: one Watch stream (a
/// watcher with a connection of its own), N of them on the one connection (watchers sharing a connection),
/// or N watches on ONE Watch stream (watchers sharing the stream too, as etcd's Go client does).
final class EtcdGRPCRawWatch: Sendable {
    /// How the watches share the connection.
    enum Layout: Sendable {
        /// This many Watch streams, one watch on each.
        case streams(Int)
        /// One Watch stream carrying this many watches, each its own watch ID; each create request is sent
        /// once the previous one's `created` answer came, as etcd's Go client sends them. The events of all
        /// of them share the stream's flow-control window, opened to the largest (2 GiB: some 20 million
        /// events of the floor's size) as the connection's, so nothing is granted back.
        case watchIDs(Int)

        /// How many watches in all.
        var watches: Int {
            switch self {
            case .streams(let count), .watchIDs(let count): count
            }
        }
    }

    /// The watch's socket once connected (for ``stop()``), or why the watch could not start.
    private let started = Mutex<Result<GatewaySocket, EtcdGatewayError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic(false)

    /// Opens watches of `key` on one connection as `layout` says and returns once etcd confirmed every one
    /// (`created`, at most 10 s plus 50 ms per watch).
    init(
        endpoint: URL, key: String, layout: Layout = .streams(1), onValue: @escaping @Sendable (Int) -> Void
    ) throws {
        let thread = Thread { [self] in
            defer { finished.signal() }
            let reader: WatchReader
            do {
                reader = try WatchReader(endpoint: endpoint, key: key, layout: layout)
                started.withLock { $0 = .success(reader.connection.socket) }
            } catch {
                started.withLock { $0 = .failure(error as? EtcdGatewayError ?? EtcdGatewayError("\(error)")) }
                ready.signal()
                return
            }
            ready.signal()
            while let values = reader.nextValues() {  // until stop() shuts the socket down
                for value in values { onValue(value) }
            }
        }
        thread.name = "defaults-bench.raw-grpc-watch"
        thread.start()
        ready.wait()
        if case .failure(let error) = started.withLock({ $0 }) {
            finished.wait()
            throw error
        }
    }

    /// Closes the streams and waits for the reading thread to end.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        if case .success(let socket) = started.withLock({ $0 }) { socket.shutDown() }
        finished.wait()
    }
}

/// The messages of one connection's Watch streams, read by one thread.
private final class WatchReader {
    let connection: EtcdGRPCRawConnection
    /// Bytes of each stream's DATA not yet forming a whole gRPC message.
    private var pending: [UInt32: [UInt8]] = [:]
    /// The watch IDs etcd created on the one stream (`.watchIDs`); events of other IDs are not handed on.
    /// `nil`: one watch per stream, every event handed on.
    private var watchIDs: Set<Int64>?

    /// Connects, creates the watches of `key` `layout` asks for and waits until etcd confirmed every one.
    init(endpoint: URL, key: String, layout: EtcdGRPCRawWatch.Layout) throws {
        connection = try EtcdGRPCRawConnection(endpoint: endpoint)
        let create = EtcdGRPCRaw.field(1, bytes: EtcdGRPCRaw.field(1, bytes: Array(key.utf8)))
        let deadline = monotonicNanoseconds() + 10_000_000_000 + layout.watches * 50_000_000
        var created = 0
        func createdAnswers() throws -> [ArraySlice<UInt8>] {
            let remaining = Int32(clamping: max(0, (deadline - monotonicNanoseconds()) / 1_000_000))
            guard remaining > 0, let messages = try nextMessages(timeoutMilliseconds: remaining) else {
                throw EtcdGatewayError(
                    "\(layout.watches - created) of \(layout.watches) watches of \(key) at \(endpoint.absoluteString) "
                        + "were not created in time")
            }
            return messages.filter { message in
                EtcdGRPCRaw.fields(message).contains { $0.number == 3 && $0.varint == 1 }
            }
        }
        switch layout {
        case .streams(let streams):
            for _ in 0..<streams {
                let stream = try connection.call("/etcdserverpb.Watch/Watch", request: create, endsStream: false)
                pending[stream] = []
            }
            while created < streams { created += try createdAnswers().count }
        case .watchIDs(let count):
            let stream = try connection.call("/etcdserverpb.Watch/Watch", request: create, endsStream: false)
            pending[stream] = []
            var ids = Set<Int64>()
            while created < count {
                for answer in try createdAnswers() {
                    let fields = EtcdGRPCRaw.fields(answer)
                    if fields.contains(where: { $0.number == 4 && $0.varint == 1 }) {
                        throw EtcdGatewayError("etcd refused watch \(created + 1) of \(key) on the one Watch stream")
                    }
                    // proto3 leaves a zero watch ID out: etcd's first on a stream is 0.
                    let id = Int64(bitPattern: fields.last { $0.number == 2 }?.varint ?? 0)
                    guard ids.insert(id).inserted else {
                        throw EtcdGatewayError("etcd created watch ID \(id) twice on one Watch stream")
                    }
                    created += 1
                    if created < count { try connection.send(create, on: stream) }
                }
            }
            watchIDs = ids
        }
    }

    /// The integer values of the events in the next messages; `nil` once the connection ended.
    func nextValues() -> [Int]? {
        guard let messages = try? nextMessages(timeoutMilliseconds: -1) else { return nil }
        return messages.flatMap { message in
            let fields = EtcdGRPCRaw.fields(message)
            if let watchIDs, !watchIDs.contains(Int64(bitPattern: fields.last { $0.number == 2 }?.varint ?? 0)) {
                return [Int]()
            }
            return fields.filter { $0.number == 11 }.compactMap { event in
                EtcdGRPCRaw.fields(event.bytes).first { $0.number == 2 }
                    .flatMap { kv in EtcdGRPCRaw.fields(kv.bytes).first { $0.number == 5 } }
                    .flatMap { Int(String(decoding: $0.bytes, as: UTF8.self)) }
            }
        }
    }

    /// The whole messages completed by the next DATA frame of one of the streams; `nil` when the connection
    /// ended or the time ran out.
    private func nextMessages(timeoutMilliseconds: Int32) throws -> [ArraySlice<UInt8>]? {
        while true {
            guard let frame = try connection.nextFrame(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
            guard frame.type == EtcdGRPCRaw.FrameType.data.rawValue, var bytes = pending[frame.stream] else {
                continue
            }
            bytes += frame.payload
            var messages: [ArraySlice<UInt8>] = []
            var start = 0
            while bytes.count - start >= 5 {
                let length =
                    Int(bytes[start + 1]) << 24 | Int(bytes[start + 2]) << 16
                    | Int(bytes[start + 3]) << 8 | Int(bytes[start + 4])
                guard bytes.count - start - 5 >= length else { break }
                messages.append(Array(bytes[(start + 5)..<(start + 5 + length)])[...])
                start += 5 + length
            }
            bytes.removeFirst(start)
            pending[frame.stream] = bytes
            if !messages.isEmpty { return messages }
        }
    }
}
