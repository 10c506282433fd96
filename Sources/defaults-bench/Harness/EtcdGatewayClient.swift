import EtcdLauncher
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The floor of the cloud group: etcd's v3 JSON gateway spoken over plain sockets, no library code.
///
/// ``EtcdRawPutter`` puts over one kept-alive HTTP/1.1 connection (the least a writer can do per value);
/// ``EtcdRawSwapper`` sends the compare-and-swap transaction the library uploads with, the same way;
/// ``EtcdRawWatch`` reads one `/v3/watch` stream. Only what the benchmark needs: one key, integer values,
/// a loopback IPv4 member.
enum EtcdGateway {
    /// JSON of a put of `value` to `key` (etcd wants both as base64).
    static func putBody(key: String, value: String) -> String {
        "{\"key\":\"\(base64(key))\",\"value\":\"\(base64(value))\"}"
    }

    /// JSON of a transaction of the library's shape: put `value` to `key` if its modification revision is
    /// `expected` (0: absent), else nothing.
    static func compareAndSwapBody(key: String, value: String, expected: Int) -> String {
        let key = base64(key)
        return
            "{\"compare\":[{\"key\":\"\(key)\",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\"\(expected)\"}],"
            + "\"success\":[{\"request_put\":{\"key\":\"\(key)\",\"value\":\"\(base64(value))\"}}]}"
    }

    /// The first decimal `"NAME":"N"` in a JSON answer (etcd's gateway writes 64-bit integers as strings).
    static func integerField(_ name: String, in body: ArraySlice<UInt8>) -> Int? {
        guard let start = body.firstRange(of: Array("\"\(name)\":\"".utf8))?.upperBound,
            let end = body[start...].firstIndex(of: UInt8(ascii: "\""))
        else { return nil }
        return Int(String(decoding: body[start..<end], as: UTF8.self))
    }

    /// JSON creating a watch of exactly `key`.
    static func watchBody(key: String) -> String {
        "{\"create_request\":{\"key\":\"\(base64(key))\"}}"
    }

    /// An HTTP/1.1 POST of a JSON body, head and body in one buffer (so it goes out in one `send`).
    static func request(_ path: String, body: String, endpoint: URL) -> [UInt8] {
        Array(
            ("POST \(path) HTTP/1.1\r\nHost: \(endpoint.host ?? "127.0.0.1"):\(endpoint.port ?? 2379)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// Every integer value in one watch message (`"value":"<base64>"`; a delete carries none). The library
    /// stores an integer as its JSON text, so the floor's watch reads the library's writes too.
    static func integerValues(in line: ArraySlice<UInt8>) -> [Int] {
        let marker = Array("\"value\":\"".utf8)
        var values: [Int] = []
        var index = line.startIndex
        while let start = line[index...].firstRange(of: marker)?.upperBound {
            guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { break }
            if let data = Data(base64Encoded: Data(line[start..<end])),
                let value = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            {
                values.append(value)
            }
            index = end
        }
        return values
    }
}

/// Why a raw gateway request failed.
struct EtcdGatewayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One TCP connection to an etcd member on a loopback IPv4 address, with `TCP_NODELAY`.
final class GatewaySocket: Sendable {
    let descriptor: Int32
    private let endpoint: URL

    init(_ endpoint: URL) throws {
        self.endpoint = endpoint
        guard let host = endpoint.host, let port = endpoint.port else {
            throw EtcdGatewayError("\(endpoint) has no host and port")
        }
        guard let descriptor = connectedIPv4Socket(host: host, port: port) else {
            throw EtcdGatewayError("cannot connect to \(endpoint.absoluteString): errno \(errno)")
        }
        self.descriptor = descriptor
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw EtcdGatewayError("send to \(endpoint.absoluteString): errno \(errno)") }
            sent += count
        }
    }

    /// Appends what arrives next to `buffer`, waiting at most `timeoutMilliseconds` (-1: forever);
    /// `false` when the peer closed the connection or the time ran out.
    func receive(into buffer: inout [UInt8], timeoutMilliseconds: Int32 = -1) -> Bool {
        var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&pollDescriptor, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 16_384)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    /// Ends the connection in both directions (a thread blocked in ``receive(into:timeoutMilliseconds:)`` returns).
    func shutDown() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    deinit { close(descriptor) }
}

/// One kept-alive HTTP/1.1 connection to the gateway: a POST, then its answer (status 200 and its
/// `Content-Length` body) before the next; reconnects after a failure.
final class EtcdRawConnection {
    private let endpoint: URL
    private var socket: GatewaySocket?

    init(endpoint: URL) { self.endpoint = endpoint }

    /// Posts `body` to `path` and returns the answer's body.
    func post(_ path: String, body: String) throws -> ArraySlice<UInt8> {
        let request = EtcdGateway.request(path, body: body, endpoint: endpoint)
        let connection = try socket ?? GatewaySocket(endpoint)
        socket = connection
        do {
            try connection.send(request)
            return try readAnswer(connection, path)
        } catch {
            socket = nil  // a broken connection is not reused
            throw error
        }
    }

    private func readAnswer(_ connection: GatewaySocket, _ path: String) throws -> ArraySlice<UInt8> {
        var buffer: [UInt8] = []
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var bodyLength = 0
        while true {
            if headEnd == nil, let range = buffer.firstRange(of: separator) {
                headEnd = range.upperBound
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 200") else {
                    throw EtcdGatewayError(
                        "\(path) at \(endpoint.absoluteString) answered \(head.prefix { $0 != "\r" })")
                }
                guard
                    let length = head.split(separator: "\r\n").first(where: {
                        $0.lowercased().hasPrefix("content-length:")
                    })
                    .flatMap({ Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) })
                else {
                    throw EtcdGatewayError("\(path) at \(endpoint.absoluteString): an answer without Content-Length")
                }
                bodyLength = length
            }
            if let headEnd, buffer.count >= headEnd + bodyLength { return buffer[headEnd..<(headEnd + bodyLength)] }
            guard connection.receive(into: &buffer, timeoutMilliseconds: 10_000) else {
                throw EtcdGatewayError("\(path) at \(endpoint.absoluteString): no complete answer within 10 s")
            }
        }
    }
}

/// Puts integer values to one key over one kept-alive connection, waiting for each answer before the next.
final class EtcdRawPutter {
    private let connection: EtcdRawConnection
    private let key: String

    init(endpoint: URL, key: String) {
        connection = EtcdRawConnection(endpoint: endpoint)
        self.key = key
    }

    func put(_ value: Int) throws {
        _ = try connection.post("/v3/kv/put", body: EtcdGateway.putBody(key: key, value: String(value)))
    }
}

/// Writes integer values to one key as the library uploads: each a `/v3/kv/txn` compare-and-swap on the
/// key's modification revision, over one kept-alive connection. The revision is tracked from the answers
/// (a written value's is the answer's header revision); a refused swap fails, so a conflict is never
/// mistaken for a write.
final class EtcdRawSwapper {
    private let connection: EtcdRawConnection
    private let key: String
    /// The key's modification revision as this writer last saw it (0: absent).
    private(set) var revision = 0

    init(endpoint: URL, key: String) {
        connection = EtcdRawConnection(endpoint: endpoint)
        self.key = key
    }

    func swap(_ value: Int) throws {
        let answer = try connection.post(
            "/v3/kv/txn", body: EtcdGateway.compareAndSwapBody(key: key, value: String(value), expected: revision))
        if answer.firstRange(of: Array("\"succeeded\":true".utf8)) != nil {
            guard let written = EtcdGateway.integerField("revision", in: answer) else {
                throw EtcdGatewayError(
                    "txn on \(key): an answer without a header revision: \(String(decoding: answer, as: UTF8.self))")
            }
            revision = written
        } else {
            throw EtcdGatewayError("txn on \(key) refused: its modification revision is no longer \(revision)")
        }
    }
}

/// Reads one etcd watch stream on a thread of its own and hands every integer value of every event to
/// `onValue`, as soon as its line is complete.
final class EtcdRawWatch: Sendable {
    private let socket: GatewaySocket
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic(false)

    /// Opens the watch of `key` and returns once etcd confirmed it (`"created":true`, at most 10 s).
    init(endpoint: URL, key: String, onValue: @escaping @Sendable (Int) -> Void) throws {
        let socket = try GatewaySocket(endpoint)
        self.socket = socket
        try socket.send(EtcdGateway.request("/v3/watch", body: EtcdGateway.watchBody(key: key), endpoint: endpoint))
        var buffer: [UInt8] = []
        let created = Array("\"created\":true".utf8)
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while buffer.firstRange(of: created) == nil {
            let remaining = (deadline - monotonicNanoseconds()) / 1_000_000
            guard remaining > 0, socket.receive(into: &buffer, timeoutMilliseconds: Int32(remaining)) else {
                throw EtcdGatewayError(
                    "the watch of \(key) at \(endpoint.absoluteString) was not created within 10 s: \(String(decoding: buffer, as: UTF8.self))"
                )
            }
        }
        // Everything up to the end of the line holding "created" is the confirmation.
        let confirmation = buffer.firstRange(of: created)!.upperBound
        let rest = Array(buffer[confirmation...].drop { $0 != UInt8(ascii: "\n") })
        let thread = Thread { [socket, finished] in
            defer { finished.signal() }
            var pending = rest
            repeat {
                // Lines of the chunked body: chunk sizes, empty lines, and one JSON message per line.
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[..<newline]
                    if line.first == UInt8(ascii: "{") {
                        for value in EtcdGateway.integerValues(in: line) { onValue(value) }
                    }
                    pending.removeSubrange(...newline)
                }
            } while socket.receive(into: &pending)  // until stop() shuts the socket down
        }
        thread.name = "defaults-bench.raw-etcd-watch"
        thread.start()
    }

    /// Closes the stream and waits for the reading thread to end.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        socket.shutDown()
        finished.wait()
    }
}
