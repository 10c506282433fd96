import Foundation

/// An HTTP/2 client connection to one etcd member (RFC 9113): `http` endpoints speak h2c with prior
/// knowledge (what etcd's client port accepts for gRPC), `https` ones HTTP/2 over TLS chosen with ALPN `h2`.
/// Many exchanges (``HTTP2Exchange``) run on it at once, each its own stream: a long-lived watch beside
/// unary calls.
///
/// One reader thread per connection decodes the frames and hands them to the streams (``HTTP2Multiplexer``);
/// callers block in their exchange's `send` and `receive`, or hand a stream to a consumer that the reader
/// thread runs as items arrive (``HTTP2Exchange/consume(_:)``). Flow control runs both ways: sends wait for the
/// member's windows, and the client grants its stream windows back only as the caller takes the data, so a
/// slow consumer holds at most one stream window of data (``HTTP2Multiplexer/streamWindow``). Everything the
/// member sends is bounded as it arrives: frames by SETTINGS_MAX_FRAME_SIZE, header blocks (with their
/// CONTINUATION frames) and decoded header lists by ``EtcdReadLimits/headBytes``.
///
/// The connection lives while it, or any of its exchanges, is referenced; ``close()`` ends it early.
final class HTTP2Connection: Sendable {
    private let multiplexer: HTTP2Multiplexer

    private init(multiplexer: HTTP2Multiplexer) { self.multiplexer = multiplexer }

    /// Connects to `url`'s member, sends the connection preface and the client's SETTINGS, and waits for the
    /// member's SETTINGS, all by `deadline`.
    static func open(url: URL, transport: EtcdTransport, deadline: ContinuousClock.Instant) throws(EtcdHTTP.Failure)
        -> HTTP2Connection
    {
        guard url.scheme == "http" || url.scheme == "https" else {
            throw EtcdHTTP.Failure("only http:// and https:// endpoints are supported, not \(url.absoluteString)")
        }
        let left = ContinuousClock.now.duration(to: deadline)
        let timeout = max(left.timeInterval, 0.001)
        let tls = url.scheme == "https"
        let connection: EtcdHTTP.Connection
        switch EtcdHTTP.Connection.open(
            url: url, timeout: timeout, deadline: deadline, transport: transport, alpn: tls ? ["h2"] : [])
        {
        case .success(let opened): connection = opened
        case .failure(let failure) where failure.rejected && failure.text.contains(TLSContext.noCommonProtocol):
            throw Self.withoutHTTP2(failure.text)
        case .failure(let failure): throw failure
        }
        if tls, connection.tls?.negotiatedProtocol != "h2" {
            connection.close()
            let chosen = connection.tls?.negotiatedProtocol.map { "chose \($0)" } ?? "chose no protocol"
            throw Self.withoutHTTP2(
                "the TLS handshake did not select HTTP/2: the client offered ALPN h2 and the server \(chosen)")
        }
        let socket = HTTP2Socket(descriptor: connection.descriptor, tls: connection.tls)
        let multiplexer = HTTP2Multiplexer(
            socket: socket, scheme: url.scheme ?? "http",
            authority: "\(url.host ?? "localhost"):\(url.port ?? EtcdHTTP.defaultPort(url))", limits: transport.limits)
        try multiplexer.start(deadline: deadline)
        return HTTP2Connection(multiplexer: multiplexer)
    }

    /// A member reached over TLS that does not speak HTTP/2 (`why`), with the way out.
    private static func withoutHTTP2(_ why: String) -> EtcdHTTP.Failure {
        var failure = EtcdHTTP.Failure(
            "\(why), so gRPC cannot be used there (`?transport=gateway` speaks etcd's JSON gateway over HTTP/1.1)")
        failure.rejected = true
        return failure
    }

    /// Opens a stream for a POST to `path` with `headers` after the pseudo-headers (`:method`, `:scheme`,
    /// `:path`, `:authority`), e.g. `content-type: application/grpc` and `te: trailers`. When the member's
    /// SETTINGS_MAX_CONCURRENT_STREAMS are all in use, waits until `deadline` (`nil`: no bound) for one to
    /// end. A connection that is not usable fails with ``EtcdHTTP/Failure/notProcessed``.
    func exchange(path: String, headers: [HTTP2Header], deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure)
        -> any HTTP2Exchange
    {
        let stream = try multiplexer.openStream(path: path, headers: headers, deadline: deadline)
        return HTTP2Stream(connection: self, multiplexer: multiplexer, state: stream)
    }

    /// Opens a stream as ``exchange(path:headers:deadline:)`` does and sends `body` as the whole request: a
    /// unary call's request goes out with its header block in one `write`.
    func exchange(path: String, headers: [HTTP2Header], body: [UInt8], deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure) -> any HTTP2Exchange
    {
        let stream = try multiplexer.openStream(path: path, headers: headers, body: body, deadline: deadline)
        return HTTP2Stream(connection: self, multiplexer: multiplexer, state: stream)
    }

    /// Whether new exchanges can be opened: false once the member sent GOAWAY, the connection broke, or it
    /// was closed.
    var isUsable: Bool { multiplexer.isUsable }

    /// Whether the member sent GOAWAY because the client pinged more often than its keepalive policy allows
    /// (ENHANCE_YOUR_CALM, 'too_many_pings').
    var wasPingedTooOften: Bool { multiplexer.wasPingedTooOften }

    /// Whether the member wrote HEADERS or DATA since the last ``ping(deadline:)``: gRPC servers count a PING
    /// against their keepalive policy only when they wrote neither since the one before.
    var memberWroteSinceLastPing: Bool { multiplexer.memberWroteSinceLastPing }

    /// How many times bytes arrived from the member so far: a count that moved shows it answers.
    var readCount: Int { multiplexer.readCount }

    /// How many `write`s the connection made to its socket so far.
    var writeCount: Int { multiplexer.writeCount }

    /// Counts a PING as sent for ``memberWroteSinceLastPing``, before it is: see
    /// ``HTTP2Multiplexer/notePingSent()``.
    func notePingSent() { multiplexer.notePingSent() }

    /// Whether the member sent anything after ``readCount`` was `reads` (read since, or waiting in the
    /// socket): a member that did is not hung, even if one call on the connection got no answer in time.
    func heardFrom(since reads: Int) -> Bool { multiplexer.heardFrom(since: reads) }

    /// Sends a PING and waits until `deadline` for its acknowledgement; returns the round trip's time. A
    /// member that does not answer is dead or hung (clientv3's keepalive).
    @discardableResult
    func ping(deadline: ContinuousClock.Instant) throws(EtcdHTTP.Failure) -> Duration {
        try multiplexer.ping(deadline: deadline)
    }

    /// Ends the connection: its exchanges fail (saying `reason`, when given, after "the client closed the
    /// connection"), the member gets a GOAWAY. Harmless when closed already.
    func close(reason: String? = nil) { multiplexer.close(reason: reason) }

    /// How many times one of its exchanges' readers woke with nothing for it
    /// (``HTTP2Multiplexer/readerWakeupsWithNothing``).
    var readerWakeupsWithNothing: Int { multiplexer.readerWakeupsWithNothing }

    deinit { multiplexer.close() }
}

/// One exchange's stream on an ``HTTP2Connection``.
private final class HTTP2Stream: HTTP2Exchange {
    /// Keeps the connection open while the exchange is in use.
    private let connection: HTTP2Connection
    private let multiplexer: HTTP2Multiplexer
    /// The stream's state, shared with the reader thread.
    private let state: HTTP2StreamState

    init(connection: HTTP2Connection, multiplexer: HTTP2Multiplexer, state: HTTP2StreamState) {
        self.connection = connection
        self.multiplexer = multiplexer
        self.state = state
    }

    func send(_ data: Data, endStream: Bool, deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) {
        try multiplexer.send(data, on: state, endStream: endStream, deadline: deadline)
    }

    func receive(deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) -> HTTP2Received {
        try multiplexer.receive(on: state, deadline: deadline)
    }

    func cancel() { multiplexer.cancel(state) }

    func consume(_ consumer: (HTTP2Received) -> Bool) throws(EtcdHTTP.Failure) {
        // The multiplexer keeps `consumer` only until it returns.
        try withoutActuallyEscaping(consumer) { consumer throws(EtcdHTTP.Failure) in
            try multiplexer.consume(state, with: consumer)
        }
    }

    deinit { multiplexer.cancel(state) }
}
