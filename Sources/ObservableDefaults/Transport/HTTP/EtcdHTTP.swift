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
    /// What came back: a status and body, or a failure (refused, reset, timed out, or an answer that breaks
    /// HTTP's rules or the client's limits, ``EtcdReadLimits``).
    enum Outcome {
        case answer(status: Int, body: Data)
        /// What went wrong, worded to follow "etcd member <endpoint> " (``Failure/sentence(timeout:)``):
        /// "cannot be reached: …", "did not answer within 3 s: …", or what the member sent ("sent an answer
        /// larger than 8 MiB …"). `refused` when the connection was refused or had no route (nothing listens
        /// there now), `rejected` when the TLS handshake was turned down (certificate, protocol, TLS set-up) —
        /// both a definite "no", as opposed to a timeout, a broken connection or a broken answer.
        case unreachable(String, refused: Bool, rejected: Bool = false)
    }

    /// One blocking POST; `timeout` bounds the whole exchange — connecting, the TLS handshake, sending and the
    /// whole answer — however the member spreads its bytes over it. With a `pool`, an idle
    /// connection to the member is reused and kept for the next request when the answer allows it.
    /// `whileWaiting` is the caller's own work to overlap with the round trip: it runs once, when the request
    /// would first wait, after it is sent on a kept-alive connection, or before a new connection is opened.
    ///
    /// A reused connection the member closed meanwhile (idle timeout, restart) fails before any byte of the
    /// answer: then the request is sent once more on a new connection, within what is left of `timeout`. That
    /// may repeat a request the member did carry out before closing; the store's writes are compare-and-swap
    /// transactions, whose repeat fails the comparison and returns the value written, which the store
    /// recognises as its own.
    static func post(
        url: URL, body: Data, headers: [String: String], timeout: TimeInterval, transport: EtcdTransport,
        pool: EtcdConnectionPool? = nil,
        whileWaiting: () -> Void = {}
    ) -> Outcome {
        post(
            to: EtcdTarget(url), body: body, headers: headers, timeout: timeout, transport: transport, pool: pool,
            whileWaiting: whileWaiting)
    }

    /// ``post(url:body:headers:timeout:transport:pool:whileWaiting:)`` to a target read from its URL before.
    static func post(
        to target: EtcdTarget, body: Data, headers: [String: String], timeout: TimeInterval, transport: EtcdTransport,
        pool: EtcdConnectionPool? = nil, whileWaiting: () -> Void = {}
    ) -> Outcome {
        let member = target.member
        let deadline = Self.deadline(after: timeout)
        var waited = false
        func aboutToWait() {
            if !waited { whileWaiting() }
            waited = true
        }
        if let pool, var connection = pool.take(member) {
            connection.begin(timeout: timeout, deadline: deadline)
            switch exchange(&connection, target: target, body: body, headers: headers, afterSending: aboutToWait) {
            case .success(let (status, result)):
                if connection.canBeReused { pool.keep(connection, for: member) } else { connection.close() }
                return .answer(status: status, body: result)
            case .failure(let failure):
                connection.close()
                if failure.answerStarted || failure.timedOut || failure.malformed {
                    return .unreachable(failure.sentence(timeout: timeout), refused: false)
                }
            }
        }
        aboutToWait()
        var connection: Connection
        switch Connection.open(url: target.url, timeout: timeout, deadline: deadline, transport: transport) {
        case .success(let opened): connection = opened
        case .failure(let why):
            return .unreachable(why.sentence(timeout: timeout), refused: why.refused, rejected: why.rejected)
        }
        switch exchange(&connection, target: target, body: body, headers: headers, afterSending: {}) {
        case .success(let (status, result)):
            if let pool, connection.canBeReused { pool.keep(connection, for: member) } else { connection.close() }
            return .answer(status: status, body: result)
        case .failure(let failure):
            connection.close()
            return .unreachable(failure.sentence(timeout: timeout), refused: false, rejected: failure.rejected)
        }
    }

    /// Sends one request on `connection`, runs `afterSending`, and reads the whole answer.
    private static func exchange(
        _ connection: inout Connection, target: EtcdTarget, body: Data, headers: [String: String],
        afterSending: () -> Void
    ) -> Result<(Int, Data), Failure> {
        do {
            try connection.send(request(target, body: body, headers: headers, keepAlive: true))
            afterSending()
            let status = try connection.readHead()
            var result = Data()
            try connection.readBody(limit: connection.limits.answerBytes, expecting: { result.reserveCapacity($0) }) {
                piece in
                result.append(piece)
                return true
            }
            return .success((status, result))
        } catch {
            var failure = error
            failure.answerStarted = connection.receivedBytes
            return .failure(failure)
        }
    }

    /// A streaming POST: `onStatus` gets the status once the head arrived; `onData` each piece of the body
    /// until it returns false, the body ends, or the connection breaks (the failure, if any, is returned).
    /// `headTimeout` bounds connecting, sending and the head; the body may then take as long as it likes (a
    /// quiet watch is fine: hung members are found by probing), each piece within
    /// ``EtcdReadLimits/answerBytes`` when chunked. `register` receives a function that aborts the stream
    /// from another thread (and does nothing once the stream has ended).
    static func stream(
        url: URL, body: Data, headers: [String: String], headTimeout: TimeInterval, transport: EtcdTransport,
        register: (@escaping @Sendable () -> Void) -> Void, onStatus: (Int) -> Void, onData: (Data) -> Bool
    ) -> Failure? {
        var connection: Connection
        switch Connection.open(url: url, timeout: headTimeout, transport: transport) {
        case .success(let opened): connection = opened
        case .failure(let why): return why
        }
        // The abort may come after the stream ended (a watch is cancelled, or ends, once its read returned):
        // by then the descriptor's number may be another socket's, which it must not shut down. The number
        // is forgotten under the lock the abort takes, before the descriptor is closed.
        let open = Locked<Int32?>(connection.descriptor)
        defer {
            open.withLock { $0 = nil }
            connection.close()
        }
        register { open.withLock { descriptor in if let descriptor { _ = shutdown(descriptor, Int32(SHUT_RDWR)) } } }
        do {
            try connection.send(request(EtcdTarget(url), body: body, headers: headers, keepAlive: false))
            let status = try connection.readHead()
            connection.endDeadline()
            onStatus(status)
            try connection.readBody(limit: nil) { onData(Data(buffer: $0)) }
            return nil
        } catch {
            return error
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

    /// The longest timeout taken as it is (about 31 years); longer ones, and nonsense, are cut to it.
    private static let longestTimeout: TimeInterval = 1e9

    /// `timeout` seconds from now.
    static func deadline(after timeout: TimeInterval) -> ContinuousClock.Instant {
        ContinuousClock.now + .seconds(timeout.isFinite ? min(max(timeout, 0), longestTimeout) : longestTimeout)
    }

    /// `seconds` for messages: "3 s", "0.5 s".
    static func describe(seconds: TimeInterval) -> String {
        guard seconds.isFinite, seconds < longestTimeout else { return "\(seconds) s" }
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// Up to 40 bytes of what a member sent, for an error message: printable ASCII as it is, other bytes as
    /// `\xNN`, and `…` when there was more.
    static func excerpt<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var text = ""
        for byte in bytes.prefix(40) {
            if (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += (byte < 0x10 ? "\\x0" : "\\x") + String(byte, radix: 16, uppercase: true)
            }
        }
        return bytes.count > 40 ? text + "…" : text
    }

    struct Failure: Error {
        /// What happened. For a ``malformed`` answer it reads after "etcd member <endpoint> " ("sent …").
        let text: String
        /// Connecting was refused or had no route.
        var refused = false
        /// The TLS handshake (or the TLS set-up before it) failed other than by a timeout, or the peer turned
        /// the connection down for its certificates.
        var rejected = false
        /// Some of the answer had arrived when the exchange failed (so the member did get the request).
        var answerStarted = false
        /// The exchange did not end within its timeout (a hung or trickling member; sending again would only
        /// wait again).
        var timedOut = false
        /// The member did not process the request at all (an HTTP/2 stream above the last one a GOAWAY
        /// accepted, or refused with `REFUSED_STREAM`, or never sent): it is safe to send it again elsewhere.
        var notProcessed = false
        /// The member's answer broke HTTP's rules or one of the client's limits (``EtcdReadLimits``): the
        /// connection cannot be read any further.
        var malformed = false
        /// The answer broke one of the client's limits (``EtcdReadLimits``); ``malformed`` too.
        var tooLarge = false
        init(_ text: String, refused: Bool = false) {
            self.text = text
            self.refused = refused
        }

        /// An answer that breaks HTTP's rules: `problem` says what was received and what was expected.
        static func malformed(_ problem: String) -> Failure {
            var failure = Failure("sent a malformed answer: \(problem)")
            failure.malformed = true
            return failure
        }

        /// `what` ("an answer", "a chunk", "a header line", …) larger than `limit` bytes; `detail` says what
        /// was received, `kind` names what the limit is for ("answers", "chunks", …).
        static func tooLarge(_ what: String, limit: Int, _ detail: String, kind: String) -> Failure {
            let size = EtcdReadLimits.describe(limit)
            var failure = Failure(
                "sent \(what) larger than \(size) (\(detail)); the client reads \(kind) of up to \(size), so it closed the connection"
            )
            failure.malformed = true
            failure.tooLarge = true
            return failure
        }

        /// How the failure reads after "etcd member <endpoint> ", for an exchange bounded by `timeout` seconds.
        func sentence(timeout: TimeInterval) -> String {
            if malformed { return text }
            if timedOut { return "did not answer within \(EtcdHTTP.describe(seconds: timeout)): \(text)" }
            return "cannot be reached: \(text)"
        }
    }

    /// One TCP connection, plain or through TLS, with a read buffer.
    struct Connection {
        let descriptor: Int32
        /// What this connection reads at most.
        let limits: EtcdReadLimits
        /// The TLS layer of an `https` connection; `nil`: plain.
        private(set) var tls: TLSSession?
        private var buffer: [UInt8] = []
        private var position = 0
        /// Whether any byte arrived on this connection since the last ``send(_:)``.
        private(set) var receivedBytes = false
        /// How many bytes arrived since the last ``send(_:)`` (for messages).
        private var receivedCount = 0
        /// The last answer was read to its end and did not ask to close: the connection can carry another.
        private(set) var canBeReused = false
        /// The timeouts set on the socket, so a reused connection is not asked to set the same again.
        private var receiveTimeout: TimeInterval?
        private var sendTimeout: TimeInterval?
        /// When the current exchange must be over (`nil`: no bound, a watch's body); each wait is shortened
        /// to end by then (``limitWait(receiving:sending:doing:)``).
        private var deadline: ContinuousClock.Instant?

        /// How many bytes one read asks for.
        private static let readSize = 16384
        /// How far past the deadline a wait may end, so that a socket timeout is not set again before every
        /// read of a quick answer (a `setsockopt` each) but only once the time left is clearly shorter.
        private static let deadlineTolerance: TimeInterval = 0.1

        private init(descriptor: Int32, limits: EtcdReadLimits) {
            self.descriptor = descriptor
            self.limits = limits
        }

        /// Connects to `url`'s member (`http` or `https`, through `transport`, offering the application
        /// protocols `alpn` in the TLS handshake), bounded by `deadline` (`timeout` from now if not given);
        /// `timeout` is also the socket's timeout for later exchanges. The HTTP/2 connection opens its socket
        /// here too.
        static func open(
            url: URL, timeout: TimeInterval, deadline: ContinuousClock.Instant? = nil, transport: EtcdTransport,
            alpn: [String] = []
        ) -> Result<Connection, Failure> {
            guard url.scheme == "http" || url.scheme == "https", let host = url.host else {
                return .failure(Failure("only http:// and https:// endpoints are supported, not \(url.absoluteString)"))
            }
            let port = url.port ?? defaultPort(url)
            let deadline = deadline ?? EtcdHTTP.deadline(after: timeout)
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
                let descriptor = socket(
                    current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                    current.pointee.ai_protocol)
                guard descriptor >= 0 else { lastError = errno; continue }
                var connection = Connection(descriptor: descriptor, limits: transport.limits)
                // the send timeout also bounds connect() on Linux
                connection.begin(timeout: timeout, deadline: deadline)
                var one: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                do throws(Failure) {
                    try connection.limitWait(receiving: false, sending: true, doing: "connecting")
                    if connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                        if url.scheme == "https" {
                            try connection.limitWait(receiving: true, sending: true, doing: "the TLS handshake")
                        }
                        connection.tls = try transport.secure(descriptor, url: url, alpn: alpn)
                        return .success(connection)
                    }
                } catch {
                    Glibc.close(descriptor)
                    return .failure(error)
                }
                lastError = errno
                Glibc.close(descriptor)
            }
            // connect() interrupted by the send timeout says EINPROGRESS.
            if [EINPROGRESS, ETIMEDOUT, EAGAIN].contains(lastError) {
                var failure = Failure("connecting to \(host):\(port) did not finish in time")
                failure.timedOut = true
                return .failure(failure)
            }
            return .failure(
                Failure(
                    "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))",
                    refused: [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(lastError)))
        }

        private static func timeval(_ seconds: TimeInterval) -> Glibc.timeval {
            Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        }

        /// Sets the socket's receive timeout (0: none) unless it is set to that already.
        mutating func setReceiveTimeout(_ seconds: TimeInterval) {
            guard receiveTimeout != seconds else { return }
            var value = Self.timeval(seconds)
            if setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<Glibc.timeval>.size)) == 0
            {
                receiveTimeout = seconds
            }
        }

        private mutating func setSendTimeout(_ seconds: TimeInterval) {
            guard sendTimeout != seconds else { return }
            var value = Self.timeval(seconds)
            if setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<Glibc.timeval>.size)) == 0
            {
                sendTimeout = seconds
            }
        }

        /// Starts an exchange that must be over by `deadline`; the socket's timeouts become `timeout` (no
        /// system call when they are already), and each wait is shortened further as the deadline nears.
        mutating func begin(timeout: TimeInterval, deadline: ContinuousClock.Instant) {
            let seconds = timeout.isFinite ? min(max(timeout, 0.001), EtcdHTTP.longestTimeout) : EtcdHTTP.longestTimeout
            setReceiveTimeout(seconds)
            setSendTimeout(seconds)
            self.deadline = deadline
        }

        /// Lifts the deadline, and the receive timeout: what follows (a watch's body) may wait indefinitely.
        mutating func endDeadline() {
            deadline = nil
            setReceiveTimeout(0)
        }

        /// Makes the next wait end by the deadline: a socket timeout that would outlast it (by more than
        /// ``deadlineTolerance``) is shortened to the time left. Throws when no time is left. Reading the
        /// clock is no system call (vDSO); `setsockopt` runs only when a timeout is shortened.
        private mutating func limitWait(receiving: Bool, sending: Bool, doing what: String) throws(Failure) {
            guard let deadline else { return }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw timeoutFailure(what) }
            let seconds = max(left.timeInterval, 0.001)
            func outlasts(_ timeout: TimeInterval?) -> Bool {
                guard let timeout, timeout > 0 else { return true }  // unknown, or none (0: wait forever)
                return timeout > seconds + Self.deadlineTolerance
            }
            if receiving, outlasts(receiveTimeout) { setReceiveTimeout(seconds) }
            if sending, outlasts(sendTimeout) { setSendTimeout(seconds) }
        }

        /// The exchange ran out of time while `what` ("receiving", "sending the request", …).
        private func timeoutFailure(_ what: String) -> Failure {
            let text: String
            if what == "receiving" {
                text =
                    receivedCount == 0
                    ? "no answer within the timeout"
                    : "only \(receivedCount) bytes of the answer arrived in that time (the member stalls or trickles)"
            } else {
                text = "\(what) did not finish in time"
            }
            var failure = Failure(text)
            failure.timedOut = true
            return failure
        }

        func close() { Glibc.close(descriptor) }

        mutating func send(_ data: Data) throws(Failure) {
            receivedBytes = false
            receivedCount = 0
            canBeReused = false
            var sent = 0
            while sent < data.count {
                try limitWait(receiving: false, sending: true, doing: "sending the request")
                let result = data.withUnsafeBytes { raw in
                    Result { () throws(Failure) in try sendSome(UnsafeRawBufferPointer(rebasing: raw[sent...])) }
                }
                sent += try result.get()
            }
        }

        /// Sends some of `bytes` (at least one) over the socket or its TLS layer; returns how many.
        private func sendSome(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int {
            if let tls {
                do throws(TLSError) { return try tls.write(bytes) } catch {
                    if error.timedOut { throw timeoutFailure("sending the request") }
                    var failure = Failure("sending the request failed: \(error.text)")
                    // TLS 1.3: a missing client certificate shows after the handshake
                    failure.rejected = error.turnedDown
                    throw failure
                }
            }
            while true {
                let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                if count > 0 { return count }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { throw timeoutFailure("sending the request") }
                throw Failure("sending the request failed: \(String(cString: strerror(errno)))")
            }
        }

        /// Receives into `chunk` over the socket or its TLS layer; returns how many bytes, 0 at the end.
        private func receiveSome(_ chunk: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
            if let tls {
                do throws(TLSError) { return try tls.read(into: chunk) } catch {
                    if error.timedOut { throw timeoutFailure("receiving") }
                    var failure = Failure("the connection broke: \(error.text)")
                    // TLS 1.3: a missing client certificate shows after the handshake
                    failure.rejected = error.turnedDown
                    throw failure
                }
            }
            while true {
                let count = recv(descriptor, chunk.baseAddress, chunk.count, 0)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw timeoutFailure("receiving") }
                throw Failure("the connection broke: \(String(cString: strerror(errno)))")
            }
        }

        /// Reads more bytes into the buffer; false at the end of the stream. What was read already is dropped
        /// from the buffer first, so it holds at most one read beyond what a caller still looks at.
        private mutating func fill() throws(Failure) -> Bool {
            if position == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                position = 0
            } else if position >= Self.readSize {
                buffer.removeSubrange(..<position)
                position = 0
            }
            try limitWait(receiving: true, sending: false, doing: "receiving")
            // Read on the stack, then appended: no allocation per read.
            let count = try withUnsafeTemporaryAllocation(byteCount: Self.readSize, alignment: 1) { chunk in
                Result { () throws(Failure) in
                    let count = try receiveSome(chunk)
                    buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
                    return count
                }
            }.get()
            guard count > 0 else { return false }
            receivedBytes = true
            receivedCount += count
            return true
        }

        /// Reads one line, without its line end; `part` names where it is for errors ("header", "chunk-size",
        /// "trailer"), `used` counts the bytes of that part so far against `budget`.
        private mutating func readLine(_ part: String, used: inout Int, budget: Int) throws(Failure) -> String {
            while true {
                if let end = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                    var line = buffer[position..<end]
                    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                    guard line.count <= limits.headerLineBytes else {
                        throw Failure.tooLarge(
                            "a \(part) line", limit: limits.headerLineBytes, "it begins '\(EtcdHTTP.excerpt(line))'",
                            kind: "lines")
                    }
                    used += end + 1 - position
                    guard used <= budget else {
                        throw Failure.tooLarge(
                            part == "trailer" ? "trailers" : "an answer head", limit: budget,
                            "no blank line to end it within \(budget) bytes",
                            kind: part == "trailer" ? "trailers" : "heads")
                    }
                    position = end + 1
                    return String(decoding: line, as: UTF8.self)
                }
                // A line end may still come as `\r\n`: one byte more than the limit is allowed before it.
                if buffer.count - position > limits.headerLineBytes + 1 {
                    throw Failure.tooLarge(
                        "a \(part) line", limit: limits.headerLineBytes,
                        "it begins '\(EtcdHTTP.excerpt(buffer[position...]))'", kind: "lines")
                }
                guard try fill() else { throw closedFailure }
            }
        }

        /// Reads one line that counts only against the line limit (a chunk-size line).
        private mutating func readLine(_ part: String) throws(Failure) -> String {
            var used = 0
            return try readLine(part, used: &used, budget: .max)
        }

        /// The connection ended before the answer did; with no answer at all on a plain connection, the
        /// member may serve TLS (etcd closes a plain request to its TLS port without a word).
        private var closedFailure: Failure {
            guard !receivedBytes else { return Failure("the connection closed in the middle of the answer") }
            return Failure(
                "the connection closed without an answer"
                    + (tls == nil ? " (if the member serves TLS, its endpoint must be https://)" : ""))
        }

        /// What the current answer's head said about its body and the connection.
        private var framing = Framing()

        /// Reads the status line and headers (skipping `100 Continue`); returns the status.
        mutating func readHead() throws(Failure) -> Int {
            var used = 0
            while true {
                let statusLine = try readLine("header", used: &used, budget: limits.headBytes)
                guard let status = Self.status(statusLine) else {
                    throw Failure.malformed(
                        "the status line '\(EtcdHTTP.excerpt(statusLine.utf8))', expected HTTP/1.x and a three-digit status from 100 to 599"
                    )
                }
                framing = Framing()
                while case let line = try readLine("header", used: &used, budget: limits.headBytes), !line.isEmpty {
                    framing.take(headerLine: line)
                }
                if status == 100 { continue }
                if let problem = framing.problem { throw Failure.malformed(problem) }
                if framing.chunked, let length = framing.contentLength {
                    throw Failure.malformed(
                        "both Transfer-Encoding: chunked and Content-Length: \(length), expected one of them")
                }
                return status
            }
        }

        /// The status of a status line, `HTTP/1.1 200 OK` (the reason is optional); `nil` when it is not one.
        static func status(_ line: String) -> Int? {
            let bytes = Array(line.utf8)
            guard bytes.count >= 12, bytes.starts(with: "HTTP/1.".utf8), isDigit(bytes[7]),
                bytes[8] == UInt8(ascii: " "),
                bytes.count == 12 || bytes[12] == UInt8(ascii: " "),
                (UInt8(ascii: "1")...UInt8(ascii: "5")).contains(bytes[9]), isDigit(bytes[10]), isDigit(bytes[11])
            else { return nil }
            return bytes[9...11].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }

        private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

        /// The headers that frame an answer, the only ones the client reads: `Transfer-Encoding`,
        /// `Content-Length` and `Connection`. (Kept in a dictionary of every header, lowercased, they were a
        /// few percent of a writing process's CPU.)
        struct Framing: Equatable {
            var chunked = false
            var contentLength: Int?
            var closes = false
            /// What is wrong with the framing headers, the first problem found (the answer cannot be read).
            var problem: String?

            /// Takes in one header line, `Name: value`; other headers, and lines without a colon, are ignored.
            mutating func take(headerLine line: String) {
                guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else { return }
                let name = line.utf8[..<colon]
                func value() -> String { Connection.trimmed(line[line.utf8.index(after: colon)...]) }
                if Self.name(name, is: "transfer-encoding") {
                    let value = value()
                    // Only chunked: the client decodes no other coding (and asks for none).
                    if value.lowercased() == "chunked" {
                        chunked = true
                    } else {
                        note("a Transfer-Encoding of '\(EtcdHTTP.excerpt(value.utf8))', expected chunked")
                    }
                } else if Self.name(name, is: "content-length") {
                    let value = value()
                    guard let length = Self.contentLength(value) else {
                        return note(
                            "a Content-Length of '\(EtcdHTTP.excerpt(value.utf8))', expected a decimal number of bytes")
                    }
                    if let contentLength, contentLength != length {
                        return note("two Content-Length headers, \(contentLength) and \(length), expected one")
                    }
                    contentLength = length
                } else if Self.name(name, is: "connection") {
                    closes = value().lowercased() == "close"
                }
            }

            private mutating func note(_ problem: String) {
                if self.problem == nil { self.problem = problem }
            }

            /// A `Content-Length` value: decimal digits only (no sign, no blanks, no overflow), or a list of
            /// the same number (`5, 5`, which HTTP allows); `nil` otherwise.
            static func contentLength(_ value: String) -> Int? {
                guard value.utf8.contains(UInt8(ascii: ",")) else { return decimal(value.utf8) }
                var result: Int?
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let number = decimal(Connection.trimmed(item).utf8), result == nil || result == number else {
                        return nil
                    }
                    result = number
                }
                return result
            }

            /// A non-empty run of decimal digits that fits an `Int`.
            static func decimal<Bytes: Collection<UInt8>>(_ digits: Bytes) -> Int? {
                guard !digits.isEmpty else { return nil }
                var value = 0
                for byte in digits {
                    guard Connection.isDigit(byte) else { return nil }
                    let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflowedAgain) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                    guard !overflowed, !overflowedAgain else { return nil }
                    value = sum
                }
                return value
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
            guard let first = value.firstIndex(where: { !isBlank($0) }),
                let last = value.lastIndex(where: { !isBlank($0) })
            else { return "" }
            return String(value[first...last])
        }

        /// The size of a chunk from its size line: hexadecimal digits (no sign, no `0x`, no overflow), then
        /// optionally blanks and extensions (`;name=value`, ignored); `nil` when the line is not that.
        static func chunkSize(_ line: String) -> Int? {
            let bytes = line.utf8
            let digits = bytes.prefix { hexValue($0) != nil }
            guard !digits.isEmpty else { return nil }
            var value = 0
            for byte in digits {
                guard let digit = hexValue(byte) else { return nil }
                let (times, overflowed) = value.multipliedReportingOverflow(by: 16)
                guard !overflowed else { return nil }
                value = times + digit  // cannot overflow: `times` is a multiple of 16
            }
            let rest = bytes[digits.endIndex...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard let first = rest.first else { return value }
            // Extensions: `;` and a name, in visible ASCII (blanks allowed between).
            guard first == UInt8(ascii: ";"),
                rest.dropFirst().contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
                rest.allSatisfy({ (0x20...0x7E).contains($0) || $0 == UInt8(ascii: "\t") })
            else { return nil }
            return value
        }

        private static func hexValue(_ byte: UInt8) -> Int? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
            default: nil
            }
        }

        /// Reads the body as its framing says, handing each piece to `consume` as it arrives until it returns
        /// false. `limit`: the most bytes the body may have in all (`nil`: a stream, whose consumer bounds what
        /// it keeps); no chunk may be larger than ``EtcdReadLimits/answerBytes`` either way. `expecting`
        /// learns the body's length when the head declares it, before any of it is read.
        mutating func readBody(
            limit: Int?, expecting: (Int) -> Void = { _ in }, _ consume: (UnsafeBufferPointer<UInt8>) -> Bool
        ) throws(Failure) {
            if framing.chunked {
                var total = 0
                while true {
                    let sizeLine = try readLine("chunk-size")
                    guard let size = Self.chunkSize(sizeLine) else {
                        throw Failure.malformed(
                            "a chunk size of '\(EtcdHTTP.excerpt(sizeLine.utf8))', expected hexadecimal digits")
                    }
                    guard size <= limits.answerBytes else {
                        throw Failure.tooLarge(
                            "a chunk", limit: limits.answerBytes, "its size line says \(size) bytes", kind: "chunks")
                    }
                    total &+= size
                    if let limit, total > limit {
                        throw Failure.tooLarge(
                            "an answer", limit: limit, "chunked, more than \(limit) bytes so far", kind: "answers")
                    }
                    if size == 0 {
                        var trailers = 0
                        while try !readLine("trailer", used: &trailers, budget: limits.headBytes).isEmpty {}
                        markReusableIfComplete()
                        return
                    }
                    guard try pass(size, consume) else { return }
                    guard try readLine("chunk-size").isEmpty else {
                        throw Failure.malformed(
                            "a chunk of \(size) bytes followed by more data, expected a line end after it")
                    }
                }
            } else if let length = framing.contentLength {
                if let limit, length > limit {
                    throw Failure.tooLarge("an answer", limit: limit, "Content-Length: \(length)", kind: "answers")
                }
                expecting(length)
                guard try pass(length, consume) else { return }
                markReusableIfComplete()
            } else {
                // No framing: the body ends when the connection does.
                var total = 0
                while true {
                    if position < buffer.count {
                        let count = buffer.count - position
                        total &+= count
                        if let limit, total > limit {
                            throw Failure.tooLarge(
                                "an answer", limit: limit, "no length given, more than \(limit) bytes so far",
                                kind: "answers")
                        }
                        let going = buffer.withUnsafeBufferPointer {
                            consume(UnsafeBufferPointer(rebasing: $0[position...]))
                        }
                        position = buffer.count
                        guard going else { return }
                    }
                    guard try fill() else { return }
                }
            }
        }

        /// Hands the next `count` bytes of the body to `consume`, in the pieces they arrive in (none kept
        /// beyond one read); false when `consume` said to stop.
        private mutating func pass(_ count: Int, _ consume: (UnsafeBufferPointer<UInt8>) -> Bool) throws(Failure)
            -> Bool
        {
            var left = count
            while left > 0 {
                if position == buffer.count {
                    guard try fill() else { throw Failure("the connection closed in the middle of the answer") }
                }
                let piece = min(left, buffer.count - position)
                let going = buffer.withUnsafeBufferPointer {
                    consume(UnsafeBufferPointer(rebasing: $0[position..<position + piece]))
                }
                position += piece
                left -= piece
                guard going else { return false }
            }
            return true
        }

        /// The answer ended where its framing said: another request may follow unless the member asked to
        /// close, or sent more than the answer (which would be read as the next one).
        private mutating func markReusableIfComplete() {
            canBeReused = !framing.closes && position == buffer.count
            // A large answer's buffer is not kept with an idle connection.
            if canBeReused, buffer.capacity > 4 * Self.readSize { buffer = []; position = 0 }
        }
    }
}
