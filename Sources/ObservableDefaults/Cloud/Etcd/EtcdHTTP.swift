import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small HTTP/1.1 client over a socket, plain or through TLS (``EtcdTransport``), for etcd's JSON
/// gateway: requests reuse a kept-alive connection per member (``EtcdConnectionPool``), a watch has its
/// own; a body by length or chunked (trailers skipped), streamed as it arrives for watches.
///
/// Not `URLSession`: on Linux, FoundationNetworking stops the process ("Transfer completed, but there's
/// no response") when an answer ends with HTTP trailers, which is how etcd's gateway sends every error
/// (a refused login, a denied key). Requests carry no `Expect: 100-continue`: the gateway answers them
/// (errors with trailers included) and keeps the connection, and each would cost an interim
/// `100 Continue` the member writes and the client reads on its own before the answer.
enum EtcdHTTP {
    /// What came back: a status and body, or a transport failure (refused, reset, timed out).
    enum Outcome {
        case answer(status: Int, body: Data)
        /// Why; `refused` when the connection was refused or had no route (nothing listens there now),
        /// `rejected` when the TLS handshake was turned down (certificate, protocol, TLS set-up) — both a
        /// definite "no", as opposed to a timeout or a broken connection.
        case unreachable(String, refused: Bool, rejected: Bool = false)
    }

    /// One blocking POST; `timeout` bounds connecting and each wait for data. With a `pool`, an idle
    /// connection to the member is reused and kept for the next request when the answer allows it.
    /// `beforeWaiting` runs once, when the request would first wait: after it is sent on a kept-alive
    /// connection, or before a new connection is opened.
    ///
    /// A reused connection the member closed meanwhile (idle timeout, restart) fails before any byte of
    /// the answer: then the request is sent once more on a new connection. That may repeat a request the
    /// member did carry out before closing; the store's writes are compare-and-swap transactions, whose
    /// repeat fails the comparison and returns the value written, which the store recognises as its own.
    static func post(
        url: URL, body: Data, headers: [String: String], timeout: TimeInterval, transport: EtcdTransport, pool: EtcdConnectionPool? = nil,
        beforeWaiting: () -> Void = {}
    ) -> Outcome {
        post(to: EtcdTarget(url), body: body, headers: headers, timeout: timeout, transport: transport, pool: pool, beforeWaiting: beforeWaiting)
    }

    /// ``post(url:body:headers:timeout:transport:pool:beforeWaiting:)`` to a target read from its URL before.
    static func post(
        to target: EtcdTarget, body: Data, headers: [String: String], timeout: TimeInterval, transport: EtcdTransport,
        pool: EtcdConnectionPool? = nil, beforeWaiting: () -> Void = {}
    ) -> Outcome {
        let member = target.member
        var waited = false
        func aboutToWait() {
            if !waited { beforeWaiting() }
            waited = true
        }
        if let pool, var connection = pool.take(member) {
            connection.setTimeouts(timeout)
            switch exchange(&connection, target: target, body: body, headers: headers, afterSending: aboutToWait) {
            case .success(let (status, result)):
                if connection.canBeReused { pool.keep(connection, for: member) } else { connection.close() }
                return .answer(status: status, body: result)
            case .failure(let failure):
                connection.close()
                if failure.answerStarted || failure.timedOut { return .unreachable(failure.text, refused: false) }
            }
        }
        aboutToWait()
        var connection: Connection
        switch Connection.open(url: target.url, timeout: timeout, transport: transport) {
        case .success(let opened): connection = opened
        case .failure(let why): return .unreachable(why.text, refused: why.refused, rejected: why.rejected)
        }
        switch exchange(&connection, target: target, body: body, headers: headers, afterSending: {}) {
        case .success(let (status, result)):
            if let pool, connection.canBeReused { pool.keep(connection, for: member) } else { connection.close() }
            return .answer(status: status, body: result)
        case .failure(let failure):
            connection.close()
            return .unreachable(failure.text, refused: false, rejected: failure.rejected)
        }
    }

    /// Sends one request on `connection`, runs `afterSending`, and reads the whole answer.
    private static func exchange(
        _ connection: inout Connection, target: EtcdTarget, body: Data, headers: [String: String], afterSending: () -> Void
    ) -> Result<(Int, Data), Failure> {
        do {
            try connection.send(request(target, body: body, headers: headers, keepAlive: true))
            afterSending()
            let status = try connection.readHead()
            var result = Data()
            try connection.readBody { result.append($0); return true }
            return .success((status, result))
        } catch {
            var failure = error
            failure.answerStarted = connection.receivedBytes
            return .failure(failure)
        }
    }

    /// A streaming POST: `onStatus` gets the status once the head arrived; `onData` each piece of the body
    /// until it returns false, the body ends, or the connection breaks (the error, if any, is returned).
    /// `register` receives a function that aborts the stream from another thread.
    static func stream(
        url: URL, body: Data, headers: [String: String], connectTimeout: TimeInterval, transport: EtcdTransport,
        register: (@escaping @Sendable () -> Void) -> Void, onStatus: (Int) -> Void, onData: (Data) -> Bool
    ) -> String? {
        var connection: Connection
        switch Connection.open(url: url, timeout: connectTimeout, transport: transport) {
        case .success(let opened): connection = opened
        case .failure(let why): return why.text
        }
        defer { connection.close() }
        let descriptor = connection.descriptor
        register { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
        connection.setReceiveTimeout(0)  // a quiet watch is fine: hung members are found by probing
        do {
            try connection.send(request(EtcdTarget(url), body: body, headers: headers, keepAlive: false))
            onStatus(try connection.readHead())
            try connection.readBody(onData)
            return nil
        } catch {
            return error.text
        }
    }

    private static func request(_ target: EtcdTarget, body: Data, headers: [String: String], keepAlive: Bool) -> Data {
        var head = target.head
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        var data = Data((head + "\r\n").utf8)
        data.append(body)
        return data
    }

    /// The port of `url` when it names none: 443 for `https`, else 80.
    static func defaultPort(_ url: URL) -> Int { url.scheme == "https" ? 443 : 80 }

    struct Failure: Error {
        let text: String
        /// Connecting was refused or had no route.
        var refused = false
        /// The TLS handshake (or the TLS set-up before it) failed other than by a timeout, or the peer turned
        /// the connection down for its certificates.
        var rejected = false
        /// Some of the answer had arrived when the exchange failed (so the member did get the request).
        var answerStarted = false
        /// No answer came within the timeout (a hung member; sending again would only wait again).
        var timedOut = false
        init(_ text: String, refused: Bool = false) {
            self.text = text
            self.refused = refused
        }
    }

    /// One TCP connection, plain or through TLS, with a read buffer.
    struct Connection {
        let descriptor: Int32
        /// The TLS layer of an `https` connection; `nil`: plain.
        private var tls: TLSSession?
        private var buffer: [UInt8] = []
        private var position = 0
        /// Whether any byte arrived on this connection since the last ``send(_:)``.
        private(set) var receivedBytes = false
        /// The last answer was read to its end and did not ask to close: the connection can carry another.
        private(set) var canBeReused = false
        /// The timeouts set on the socket, so a reused connection is not asked to set the same again.
        private var receiveTimeout: TimeInterval?
        private var sendTimeout: TimeInterval?

        private init(descriptor: Int32) { self.descriptor = descriptor }

        /// Connects to `url`'s member (`http` or `https`, through `transport`), bounded by `timeout`.
        static func open(url: URL, timeout: TimeInterval, transport: EtcdTransport) -> Result<Connection, Failure> {
            guard url.scheme == "http" || url.scheme == "https", let host = url.host else {
                return .failure(Failure("only http:// and https:// endpoints are supported, not \(url.absoluteString)"))
            }
            let port = url.port ?? defaultPort(url)
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else {
                return .failure(Failure("cannot resolve \(host)"))
            }
            defer { freeaddrinfo(list) }
            var lastError = ECONNREFUSED
            var entry: UnsafeMutablePointer<addrinfo>? = list
            while let current = entry {
                entry = current.pointee.ai_next
                let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
                guard descriptor >= 0 else { lastError = errno; continue }
                var connection = Connection(descriptor: descriptor)
                connection.setTimeouts(timeout)  // the send timeout also bounds connect() on Linux
                var one: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                if connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    do throws(Failure) {
                        connection.tls = try transport.secure(descriptor, url: url)
                        return .success(connection)
                    } catch {
                        Glibc.close(descriptor)
                        return .failure(error)
                    }
                }
                lastError = errno
                Glibc.close(descriptor)
            }
            return .failure(Failure(
                "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))",
                refused: [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(lastError)))
        }

        private static func timeval(_ seconds: TimeInterval) -> Glibc.timeval {
            Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        }

        mutating func setReceiveTimeout(_ seconds: TimeInterval) {
            guard receiveTimeout != seconds else { return }
            var value = Self.timeval(seconds)
            if setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<Glibc.timeval>.size)) == 0 {
                receiveTimeout = seconds
            }
        }

        /// Bounds sending (and connecting) and each wait for data by `seconds`.
        mutating func setTimeouts(_ seconds: TimeInterval) {
            setReceiveTimeout(seconds)
            guard sendTimeout != seconds else { return }
            var value = Self.timeval(seconds)
            if setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<Glibc.timeval>.size)) == 0 {
                sendTimeout = seconds
            }
        }

        func close() { Glibc.close(descriptor) }

        mutating func send(_ data: Data) throws(Failure) {
            receivedBytes = false
            canBeReused = false
            let sent = data.withUnsafeBytes { raw -> Result<Void, Failure> in
                var offset = 0
                while offset < raw.count {
                    switch Result(catching: { () throws(Failure) in try sendSome(UnsafeRawBufferPointer(rebasing: raw[offset...])) }) {
                    case .success(let count): offset += count
                    case .failure(let failure): return .failure(failure)
                    }
                }
                return .success(())
            }
            try sent.get()
        }

        /// Sends some of `bytes` (at least one) over the socket or its TLS layer; returns how many.
        private func sendSome(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int {
            if let tls {
                do throws(TLSError) { return try tls.write(bytes) } catch {
                    var failure = Failure("sending the request failed: \(error.text)")
                    failure.timedOut = error.timedOut
                    failure.rejected = error.turnedDown  // TLS 1.3: a missing client certificate shows after the handshake
                    throw failure
                }
            }
            while true {
                let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                if count > 0 { return count }
                if count < 0, errno == EINTR { continue }
                throw Failure("sending the request failed: \(String(cString: strerror(errno)))")
            }
        }

        /// Receives into `chunk` over the socket or its TLS layer; returns how many bytes, 0 at the end.
        private func receiveSome(_ chunk: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
            if let tls {
                do throws(TLSError) { return try tls.read(into: chunk) } catch {
                    var failure = Failure(error.timedOut ? error.text : "the connection broke: \(error.text)")
                    failure.timedOut = error.timedOut
                    failure.rejected = error.turnedDown  // TLS 1.3: a missing client certificate shows after the handshake
                    throw failure
                }
            }
            while true {
                let count = recv(descriptor, chunk.baseAddress, chunk.count, 0)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    var failure = Failure("no answer within the timeout")
                    failure.timedOut = true
                    throw failure
                }
                throw Failure("the connection broke: \(String(cString: strerror(errno)))")
            }
        }

        /// Reads more bytes into the buffer; false at the end of the stream.
        private mutating func fill() throws(Failure) -> Bool {
            if position > 0, position == buffer.count { buffer.removeAll(keepingCapacity: true); position = 0 }
            var chunk = [UInt8](repeating: 0, count: 16384)
            let count = try chunk.withUnsafeMutableBytes { chunk in Result { () throws(Failure) in try receiveSome(chunk) } }.get()
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            receivedBytes = true
            return true
        }

        private mutating func readLine() throws(Failure) -> String {
            while true {
                if let end = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                    var line = buffer[position..<end]
                    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                    position = end + 1
                    return String(decoding: line, as: UTF8.self)
                }
                guard try fill() else { throw closedFailure }
            }
        }

        /// The connection ended before the answer did; with no answer at all on a plain connection, the
        /// member may serve TLS (etcd closes a plain request to its TLS port without a word).
        private var closedFailure: Failure {
            guard !receivedBytes else { return Failure("the connection closed in the middle of the answer") }
            return Failure("the connection closed without an answer" + (tls == nil ? " (if the member serves TLS, its endpoint must be https://)" : ""))
        }

        /// What the current answer's head said about its body and the connection.
        private var framing = Framing()

        /// Reads the status line and headers (skipping `100 Continue`); returns the status.
        mutating func readHead() throws(Failure) -> Int {
            while true {
                let statusLine = try readLine()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
                    throw Failure("not an HTTP answer: \(statusLine.prefix(80))")
                }
                framing = Framing()
                while case let line = try readLine(), !line.isEmpty { framing.take(headerLine: line) }
                if status != 100 { return status }
            }
        }

        /// The headers that frame an answer, the only ones the client reads: `Transfer-Encoding`,
        /// `Content-Length` and `Connection`. (Kept in a dictionary of every header, lowercased, they were a
        /// few percent of a writing process's CPU.)
        struct Framing: Equatable {
            var chunked = false
            var contentLength: Int?
            var closes = false

            /// Takes in one header line, `Name: value`; other headers, and lines without a colon, are ignored.
            mutating func take(headerLine line: String) {
                guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else { return }
                let name = line.utf8[..<colon]
                func value() -> String { Connection.trimmed(line[line.utf8.index(after: colon)...]) }
                if Self.name(name, is: "transfer-encoding") {
                    chunked = value().lowercased().contains("chunked")
                } else if Self.name(name, is: "content-length") {
                    contentLength = Int(value())
                } else if Self.name(name, is: "connection") {
                    closes = value().lowercased() == "close"
                }
            }

            /// Whether a header name is `lowercase` (ASCII letters and `-`), in any case.
            private static func name(_ name: Substring.UTF8View, is lowercase: StaticString) -> Bool {
                guard name.count == lowercase.utf8CodeUnitCount else { return false }
                func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
                return lowercase.withUTF8Buffer { expected in zip(name, expected).allSatisfy { folded($0) == $1 } }
            }
        }

        /// A header value without the spaces and tabs around it (trimmed by hand: Foundation's `trimmingCharacters`
        /// goes through `NSString`, a few percent of a writing process's CPU).
        static func trimmed(_ value: Substring) -> String {
            func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }
            guard let first = value.firstIndex(where: { !isBlank($0) }), let last = value.lastIndex(where: { !isBlank($0) }) else { return "" }
            return String(value[first...last])
        }

        /// Reads the body, handing each piece to `consume` until it returns false.
        mutating func readBody(_ consume: (Data) -> Bool) throws(Failure) {
            if framing.chunked {
                while true {
                    let sizeLine = try readLine()
                    guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                        throw Failure("a malformed chunk size: \(sizeLine.prefix(40))")
                    }
                    if size == 0 {
                        while try !readLine().isEmpty {}  // trailers
                        markReusableIfComplete()
                        return
                    }
                    guard try consume(take(size)) else { return }
                    _ = try readLine()
                }
            } else if let length = framing.contentLength {
                _ = try consume(take(length))
                markReusableIfComplete()
            } else {
                while true {
                    if position < buffer.count {
                        let rest = Data(buffer[position...])
                        position = buffer.count
                        guard consume(rest) else { return }
                    }
                    guard try fill() else { return }
                }
            }
        }

        /// The answer ended where its framing said: another request may follow unless the member asked to
        /// close, or sent more than the answer (which would be read as the next one).
        private mutating func markReusableIfComplete() {
            canBeReused = !framing.closes && position == buffer.count
        }

        private mutating func take(_ count: Int) throws(Failure) -> Data {
            while buffer.count - position < count {
                guard try fill() else { throw Failure("the connection closed in the middle of the answer") }
            }
            defer { position += count }
            return Data(buffer[position..<(position + count)])
        }
    }
}

/// Idle kept-alive connections, at most one per member (`scheme://host:port`), for requests that follow each other.
/// A connection is taken out for one request and put back when its answer was read completely.
final class EtcdConnectionPool: Sendable {
    private let idle = Locked<[String: EtcdHTTP.Connection]>([:])
    /// How many requests went over a connection kept from an earlier one (for tests).
    let reuses = Locked(0)

    func take(_ member: String) -> EtcdHTTP.Connection? {
        let connection = idle.withLock { $0.removeValue(forKey: member) }
        if connection != nil { reuses.withLock { $0 += 1 } }
        return connection
    }

    /// Keeps `connection` for the next request to `member` (closing one kept already).
    func keep(_ connection: EtcdHTTP.Connection, for member: String) {
        idle.withLock { $0.updateValue(connection, forKey: member) }?.close()
    }

    /// Closes every idle connection.
    func closeAll() {
        for connection in idle.withLock({ idle in defer { idle = [:] }; return Array(idle.values) }) { connection.close() }
    }

    deinit { closeAll() }
}
