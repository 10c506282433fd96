import Foundation
import Synchronization

/// Opens HTTP/2 exchanges for gRPC calls: the HTTP/2 connection to a member provides it. The connection adds
/// the pseudo-headers (`:method POST`, `:scheme`, `:authority`, `:path` from `path`); `headers` are the
/// call's own.
protocol HTTP2ExchangeOpening: Sendable {
    /// A new stream carrying a request to `path` with `headers`, opened by `deadline` (`nil`: no bound).
    func exchange(path: String, headers: [HTTP2Header], deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure)
        -> any HTTP2Exchange

    /// A new stream whose whole request is `body` (sent with END_STREAM), opened and sent by `deadline`.
    func exchange(path: String, headers: [HTTP2Header], body: [UInt8], deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure) -> any HTTP2Exchange
}

extension HTTP2ExchangeOpening {
    /// Opens the exchange, then sends `body` on it, ending the request (cancelled if that fails).
    func exchange(path: String, headers: [HTTP2Header], body: [UInt8], deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure) -> any HTTP2Exchange
    {
        let exchange = try exchange(path: path, headers: headers, deadline: deadline)
        do throws(EtcdHTTP.Failure) { try exchange.send(Data(body), endStream: true, deadline: deadline) } catch {
            exchange.cancel()
            throw error
        }
        return exchange
    }
}

/// gRPC calls over HTTP/2 exchanges: a unary call (one request message, one answer message) and a
/// bidirectional stream (etcd's Watch). Calls block their thread.
enum GRPCCall {
    /// Metadata for etcd: its auth token (etcd reads it from the key `token`), and `hasleader: true`, with
    /// which a member without a leader ends a watch with "no leader" instead of staying silent.
    static func etcdMetadata(token: String?, requireLeader: Bool) -> [HTTP2Header] {
        var metadata: [HTTP2Header] = []
        if let token { metadata.append(HTTP2Header("token", token)) }
        if requireLeader { metadata.append(HTTP2Header("hasleader", "true")) }
        return metadata
    }

    /// A request's headers: gRPC's content type, `te: trailers` (gRPC requires it), the time left until
    /// `deadline` as `grpc-timeout`, then `metadata`.
    static func requestHeaders(
        metadata: [HTTP2Header], deadline: ContinuousClock.Instant?, now: ContinuousClock.Instant = .now
    ) -> [HTTP2Header] {
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(3 + metadata.count)
        headers.append(contentsOf: fixedHeaders)
        if let deadline { headers.append(HTTP2Header("grpc-timeout", timeout(deadline - now))) }
        for entry in metadata {
            let name = lowerCased(entry.name)
            headers.append(name == entry.name ? entry : HTTP2Header(name, entry.value))
        }
        return headers
    }

    /// The headers every request starts with.
    private static let fixedHeaders = [HTTP2Header("content-type", "application/grpc"), HTTP2Header("te", "trailers")]

    /// `duration` as a `grpc-timeout` value: at most 8 digits and a unit (`n`, `u`, `m`, `S`, `M`, `H`), the
    /// finest unit that fits, rounded up so the server never gives up before the client; "0n" once passed.
    static func timeout(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return "0n" }
        let limit: Int64 = 99_999_999
        // Below 9e9 s the nanoseconds fit in an Int64; 99,999,999 hours is far beyond that.
        guard seconds < 9_000_000_000 else { return "\(limit)H" }
        let nanoseconds = seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000
        for (unit, size) in timeoutUnits {
            let value = (nanoseconds + size - 1) / size
            if value <= limit { return String(value) + unit }
        }
        return "\(limit)H"
    }

    /// `grpc-timeout`'s units, finest first, with their nanoseconds.
    private static let timeoutUnits: [(String, Int64)] = [
        ("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000),
        ("H", 3_600_000_000_000)
    ]

    /// `name` in lower case, as HTTP/2 sends header names; a new string only when it has upper-case ASCII
    /// letters (metadata names are ASCII, ``problem(in:)`` checks).
    private static func lowerCased(_ name: String) -> String {
        name.utf8.contains { (0x41...0x5A).contains($0) } ? name.lowercased() : name
    }

    /// What is wrong with `metadata`, `nil` when it can be sent: names are letters, digits, `-`, `_` and `.`
    /// (upper-case letters are sent lower-case), not gRPC's own (`grpc-…`), not pseudo-headers and not the
    /// headers the call sets; values are printable ASCII (binary `-bin` metadata is not supported).
    static func problem(in metadata: [HTTP2Header]) -> String? {
        for entry in metadata {
            let name = lowerCased(entry.name)
            let nameIsValid =
                !name.isEmpty
                && name.utf8.allSatisfy { byte in
                    (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
                        || byte == 0x2E
                }
            guard nameIsValid, !name.hasPrefix("grpc-"), !name.hasSuffix("-bin"), !reservedNames.contains(name) else {
                return "metadata name '\(entry.name.prefix(60))' is not allowed (expected letters, digits, '-', '_' "
                    + "or '.', and not a header gRPC sets itself)"
            }
            guard entry.value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                return "the value of metadata '\(name)' holds characters other than printable ASCII"
            }
        }
        return nil
    }

    /// The headers a call sets itself, which metadata may not name.
    private static let reservedNames: Set<String> = [
        "content-type", "te", "grpc-timeout", "user-agent", "host", "connection"
    ]

    /// A unary call: sends `request` (a message's protobuf bytes) to `path` and returns the answer's one
    /// message, all by `deadline` (`nil`: no bound; sent to the server as `grpc-timeout`).
    ///
    /// Throws ``GRPCFailure/status(_:)`` when the server ended the call with a status other than OK, and
    /// ``GRPCFailure/transport(_:)`` when the exchange failed or the answer broke gRPC's rules (then the
    /// exchange is cancelled). `afterSending` is the caller's own work to overlap with a slow round trip: it
    /// runs once the request is sent and no answer came within `patience` (at once when `patience` is zero
    /// or reaches past `deadline`), and not at all when one did: the caller, which then does that work
    /// itself, spends no CPU while the server works on a quick answer (on a busy machine the server needs it).
    static func unary(
        path: String, request: [UInt8], metadata: [HTTP2Header] = [], deadline: ContinuousClock.Instant?,
        limits: EtcdReadLimits = .standard, on opener: some HTTP2ExchangeOpening, afterSending: () -> Void = {},
        patience: Duration = .zero
    ) throws(GRPCFailure) -> [UInt8] {
        // The request goes with the call's headers, in one write.
        let stream = try GRPCStream.open(
            path: path, metadata: metadata, sending: request, deadline: deadline, limits: limits, on: opener)
        do throws(GRPCFailure) {
            guard let answer = try firstMessage(of: stream, deadline: deadline, patience: patience, else: afterSending)
            else {
                throw GRPCFailure.malformed("the answer to \(path) ended with status OK but no message")
            }
            if try stream.receive(deadline: deadline) != nil {
                throw GRPCFailure.malformed("the answer to the unary call \(path) holds more than one message")
            }
            return answer
        } catch {
            stream.cancel()
            throw error
        }
    }

    /// The first message of `stream` by `deadline`; `late` runs once it has not come within `patience`.
    private static func firstMessage(
        of stream: GRPCStream, deadline: ContinuousClock.Instant?, patience: Duration, else late: () -> Void
    ) throws(GRPCFailure) -> [UInt8]? {
        let soon = ContinuousClock.now + patience
        if patience > .zero, deadline.map({ soon < $0 }) ?? true {
            do throws(GRPCFailure) {
                return try stream.receive(deadline: soon)
            } catch {
                // A receive that timed out leaves the stream as it was: the answer may still come.
                guard case .transport(let failure) = error, failure.timedOut else { throw error }
            }
        }
        late()
        return try stream.receive(deadline: deadline)
    }

    /// A unary call with etcd's messages: `request` to its method, the answer read as `Answer`; an answer
    /// that is not a valid `Answer` is a malformed answer (``GRPCFailure/transport(_:)``).
    static func unary<Answer: ProtobufMessage>(
        path: String, request: some ProtobufMessage, answer: Answer.Type, metadata: [HTTP2Header] = [],
        deadline: ContinuousClock.Instant?, limits: EtcdReadLimits = .standard, on opener: some HTTP2ExchangeOpening
    ) throws(GRPCFailure) -> Answer {
        let bytes = try unary(
            path: path, request: request.encoded(), metadata: metadata, deadline: deadline, limits: limits, on: opener)
        do throws(ProtobufError) {
            return try Answer(decoding: bytes, limits: ProtobufReader.Limits(answerBytes: limits.answerBytes))
        } catch {
            throw .malformed("an answer to \(path) that is not a valid \(Answer.protobufName): \(error)")
        }
    }
}

/// One gRPC call's stream: messages sent (without ending the request while the call goes on), messages
/// received one at a time, and the status the server ends it with. A unary call is one of these; etcd's
/// Watch keeps one open, sending create and cancel requests and receiving events.
///
/// `send`, `receive` and `cancel` may be called from different threads (one sender, any receivers: they
/// take turns); `cancel` makes a waiting `receive` or `send` return with a failure.
final class GRPCStream: Sendable {
    private let exchange: any HTTP2Exchange
    private let path: String
    private let answer: Mutex<GRPCAnswer>
    /// What ``receive(_:deadline:)`` accepts in a message.
    private let decodingLimits: ProtobufReader.Limits

    private init(exchange: any HTTP2Exchange, path: String, limits: EtcdReadLimits) {
        self.exchange = exchange
        self.path = path
        self.decodingLimits = ProtobufReader.Limits(answerBytes: limits.answerBytes)
        self.answer = Mutex(GRPCAnswer(path: path, limit: limits.answerBytes))
    }

    /// Opens a call to `path` with `metadata`; `deadline` bounds opening the stream (and sending `request`)
    /// and is sent as `grpc-timeout` (`nil` for a watch: no bound). With `request`, that one message is the
    /// call's whole request: it goes out with the stream's headers, which end the request (a unary call).
    static func open(
        path: String, metadata: [HTTP2Header] = [], sending request: [UInt8]? = nil,
        deadline: ContinuousClock.Instant?, limits: EtcdReadLimits = .standard, on opener: some HTTP2ExchangeOpening
    ) throws(GRPCFailure) -> GRPCStream {
        if let deadline, deadline <= .now {
            var failure = EtcdHTTP.Failure("the deadline of \(path) passed before the call started")
            failure.timedOut = true
            throw .transport(failure)
        }
        if let problem = GRPCCall.problem(in: metadata) {
            throw .transport(EtcdHTTP.Failure("the call to \(path) cannot be sent: \(problem)"))
        }
        let headers = GRPCCall.requestHeaders(metadata: metadata, deadline: deadline)
        do throws(EtcdHTTP.Failure) {
            let exchange: any HTTP2Exchange
            if let request {
                exchange = try opener.exchange(
                    path: path, headers: headers, body: GRPCFraming.frameBytes(request), deadline: deadline)
            } else {
                exchange = try opener.exchange(path: path, headers: headers, deadline: deadline)
            }
            return GRPCStream(exchange: exchange, path: path, limits: limits)
        } catch {
            throw .transport(error)
        }
    }

    /// Sends one message (`endStream`: the last this call sends), by `deadline`.
    func send(_ message: [UInt8], endStream: Bool = false, deadline: ContinuousClock.Instant?) throws(GRPCFailure) {
        do throws(EtcdHTTP.Failure) {
            try exchange.send(GRPCFraming.frame(message), endStream: endStream, deadline: deadline)
        } catch {
            throw .transport(error)
        }
    }

    /// Sends one of etcd's messages.
    func send(_ message: some ProtobufMessage, endStream: Bool = false, deadline: ContinuousClock.Instant?)
        throws(GRPCFailure)
    {
        try send(message.encoded(), endStream: endStream, deadline: deadline)
    }

    /// The next message the server sent, waiting for it until `deadline` (`nil`: no bound); `nil` once the
    /// server ended the call with status OK. Throws the status the server ended the call with otherwise, or
    /// a transport failure (the answer broke gRPC's rules: the exchange is cancelled).
    func receive(deadline: ContinuousClock.Instant?) throws(GRPCFailure) -> [UInt8]? {
        let (result, serverFinished) = answer.withLock { answer -> (Result<[UInt8]?, GRPCFailure>, Bool) in
            (
                Result { () throws(GRPCFailure) in try answer.next(from: exchange, deadline: deadline) },
                answer.serverFinished
            )
        }
        if case .failure(let failure) = result { freeStream(after: failure, serverFinished: serverFinished) }
        return try result.get()
    }

    /// Cancels the exchange after `failure` when that frees the stream: a broken answer, or an HTTP error
    /// status whose body is still coming (`serverFinished` false). A receive that timed out leaves a watch open.
    private func freeStream(after failure: GRPCFailure, serverFinished: Bool) {
        switch failure {
        case .transport(let failure) where failure.malformed: exchange.cancel()
        case .status where !serverFinished: exchange.cancel()
        default: break
        }
    }

    /// `bytes` read as `Message`; one that is not a valid `Message` is a malformed answer.
    private func decode<Message: ProtobufMessage>(_ bytes: [UInt8], as type: Message.Type) throws(GRPCFailure)
        -> Message
    {
        do throws(ProtobufError) {
            return try Message(decoding: bytes, limits: decodingLimits)
        } catch {
            throw .malformed("a message on \(path) that is not a valid \(Message.protobufName): \(error)")
        }
    }

    /// The next message read as `Message`; one that is not a valid `Message` is a malformed answer (the
    /// exchange is then cancelled).
    func receive<Message: ProtobufMessage>(_ type: Message.Type, deadline: ContinuousClock.Instant?)
        throws(GRPCFailure) -> Message?
    {
        guard let bytes = try receive(deadline: deadline) else { return nil }
        do throws(GRPCFailure) { return try decode(bytes, as: type) } catch {
            exchange.cancel()
            throw error
        }
    }

    /// Hands each message the server sends from now on (and any received but not yet returned) to `consumer`
    /// as it arrives, read as `Message`, on the thread that reads the connection (see
    /// ``HTTP2Exchange/consume(_:)``), until `consumer` returns false (returns false) or the server ends the
    /// call with status OK (returns true). Throws as ``receive(_:deadline:)`` does: the status the server ended
    /// the call with, a message that is not a valid `Message` or an answer that breaks gRPC's rules (the
    /// exchange is then cancelled), a transport failure.
    func consume<Message: ProtobufMessage>(_ type: Message.Type, _ consumer: (Message) -> Bool) throws(GRPCFailure)
        -> Bool
    {
        var failure: GRPCFailure?
        var stopped = false
        /// Hands over `messages`; false once the consumer wants nothing more or one does not decode.
        func hand(_ messages: [[UInt8]]) -> Bool {
            for bytes in messages {
                let message: Message
                do throws(GRPCFailure) { message = try decode(bytes, as: type) } catch {
                    failure = error
                    return false
                }
                guard consumer(message) else {
                    stopped = true
                    return false
                }
            }
            return true
        }
        /// Whether the call goes on; false once it ended (`failure` holds a status other than OK).
        func goesOn() -> Bool {
            let (ended, status) = answer.withLock { ($0.ended, $0.endStatus) }
            guard ended else { return true }
            if let status { failure = .status(status) }
            return false
        }
        if hand(answer.withLock { $0.takeMessages() }), !stopped, failure == nil, goesOn() {
            do throws(EtcdHTTP.Failure) {
                try exchange.consume { received in
                    let taken = answer.withLock { answer in
                        Result { () throws(GRPCFailure) in
                            try answer.take(received)
                            return answer.takeMessages()
                        }
                    }
                    switch taken {
                    case .failure(let error):
                        failure = error
                        return false
                    case .success(let messages):
                        return hand(messages) && goesOn()
                    }
                }
            } catch {
                failure = .transport(error)
            }
        }
        if let failure {
            freeStream(after: failure, serverFinished: answer.withLock { $0.serverFinished })
            throw failure
        }
        if stopped { return false }
        // The stream ended: with trailers (status OK), or cut off without them.
        guard answer.withLock({ $0.ended }) else {
            throw .malformed("the answer to \(path) ended without trailers (no grpc-status)")
        }
        return true
    }

    /// Ends the call early (the stream is reset); a `receive` or `send` waiting on another thread fails.
    func cancel() {
        exchange.cancel()
    }
}

/// Reads a gRPC answer from what an HTTP/2 stream delivers: the head (`:status` 200 and gRPC's content
/// type, or a trailers-only answer), the messages of the body, and the trailers with `grpc-status`.
struct GRPCAnswer {
    /// Where the answer is in its course.
    private enum Phase {
        case awaitingHead
        case body
        /// The call ended; `nil`: with status OK.
        case ended(GRPCStatus?)
    }

    private let path: String
    private var phase = Phase.awaitingHead
    /// Whether the server ended its side of the stream (a header block or DATA frame with END_STREAM).
    private(set) var serverFinished = false
    private var reader: GRPCMessageReader
    /// Messages received and not yet returned.
    private var pending: [[UInt8]] = []

    init(path: String, limit: Int) {
        self.path = path
        self.reader = GRPCMessageReader(limit: limit)
    }

    /// Whether the call ended (its trailers, or a head that ended it, arrived).
    var ended: Bool {
        guard case .ended = phase else { return false }
        return true
    }

    /// The status the call ended with; `nil` while it goes on, or when it ended with OK.
    var endStatus: GRPCStatus? {
        guard case .ended(let status) = phase else { return nil }
        return status
    }

    /// The messages received and not yet returned, taken out.
    mutating func takeMessages() -> [[UInt8]] {
        defer { pending = [] }
        return pending
    }

    /// The next message, reading from `exchange` as needed; `nil` once ended with OK.
    mutating func next(from exchange: any HTTP2Exchange, deadline: ContinuousClock.Instant?) throws(GRPCFailure)
        -> [UInt8]?
    {
        while true {
            if !pending.isEmpty { return pending.removeFirst() }
            if case .ended(let status) = phase {
                if let status { throw .status(status) }
                return nil
            }
            let received: HTTP2Received
            do throws(EtcdHTTP.Failure) {
                received = try exchange.receive(deadline: deadline)
            } catch {
                throw .transport(error)
            }
            try take(received)
        }
    }

    /// Takes one thing the stream delivered.
    mutating func take(_ received: HTTP2Received) throws(GRPCFailure) {
        switch received {
        case .headers(_, let endStream), .data(_, let endStream): serverFinished = serverFinished || endStream
        }
        switch (phase, received) {
        case (.awaitingHead, .headers(let headers, let endStream)):
            guard let statusText = Self.value(":status", in: headers), let status = Int(statusText)
            else {
                throw .malformed("an answer head without a valid :status")
            }
            if (100..<200).contains(status) { return }  // an interim head; the answer's own follows
            guard status == 200 else {
                var message = "HTTP status \(status)"
                if let text = Self.value("grpc-message", in: headers) {
                    message += ": " + GRPCStatus.decodeMessage(text)
                }
                phase = .ended(GRPCStatus(GRPCStatus.Code(httpStatus: status), message))
                return
            }
            let contentType = Self.value("content-type", in: headers) ?? ""
            guard
                contentType == "application/grpc" || contentType.hasPrefix("application/grpc+")
                    || contentType.hasPrefix("application/grpc;")
            else {
                throw .malformed("an answer whose content-type is '\(contentType)' (expected application/grpc)")
            }
            if endStream {
                try end(with: headers)
            } else {
                phase = .body
            }
        case (.awaitingHead, .data):
            throw .malformed("body bytes before the answer's head")
        case (.body, .data(let data, let endStream)):
            pending += try reader.append(data)
            if endStream {
                throw .malformed("the answer to \(path) ended without trailers (no grpc-status)")
            }
        case (.body, .headers(let trailers, let endStream)):
            guard endStream else { throw .malformed("a second header block that does not end the stream") }
            guard !reader.isInsideMessage else {
                throw .malformed("the answer ended inside a message (\(reader.unfinishedDescription))")
            }
            try end(with: trailers)
        case (.ended, _):
            throw .malformed("more after the answer ended")
        }
    }

    /// Ends the answer with the status in `trailers`.
    private mutating func end(with trailers: [HTTP2Header]) throws(GRPCFailure) {
        guard let text = Self.value("grpc-status", in: trailers) else {
            throw .malformed("the answer to \(path) ended without a grpc-status")
        }
        guard let code = GRPCStatus.code(from: text) else {
            throw .malformed("a grpc-status that is not a number: '\(text.prefix(40))'")
        }
        let message = Self.value("grpc-message", in: trailers).map(GRPCStatus.decodeMessage) ?? ""
        phase = .ended(code == .ok ? nil : GRPCStatus(code, message))
    }

    /// The value of the header (or pseudo-header) `name`.
    private static func value(_ name: String, in headers: [HTTP2Header]) -> String? {
        headers.first { $0.name == name }?.value
    }
}
