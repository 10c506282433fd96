import Foundation

/// One watch over etcd's JSON gateway: `POST /v3/watch` answered by a chunked stream of JSON objects, each
/// followed by a newline, read as they arrive on the calling thread. (A message over about 2 KB comes as
/// one chunk and its newline as the next; the error object that ends a watch has no newline and is read
/// when the stream closes.)
///
/// Each message is read into an ``EtcdWatchMessage``; `{"error": …}` ends the watch as failed. A message
/// larger than the transport's limit (``EtcdReadLimits``) ends it as too large, without reading it.
struct EtcdGatewayWatch {
    let endpoint: URL
    let transport: EtcdTransport

    private var context: String { "watch at \(endpoint.absoluteString)" }

    /// Runs the watch until the stream ends or `receive` returns false; how the stream ended
    /// (see ``EtcdWire/watch(_:at:token:headTimeout:register:receive:)``).
    func run(
        _ request: EtcdWatchRequest, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End {
        var headers = token.map { ["Authorization": $0] } ?? [:]
        // Without it a member that lost its leader keeps the watch open and silent.
        headers["Grpc-Metadata-hasleader"] = "true"
        var status = 0
        var lines = EtcdMessageLines(limit: transport.limits.answerBytes)
        // How a message ended the watch (an error from the member, a malformed message).
        var ended: EtcdWatchStream.End?
        // `receive` returned false, or a message ended the watch: nothing more is read.
        var stopped = false
        func handle(_ line: Data) -> Bool {
            guard !stopped else { return false }
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { return true }
            do throws(DefaultsError) {
                stopped = !receive(try message(EtcdAnswer(data: line, context: context)))
            } catch {
                ended = .failed(error)
                stopped = true
            }
            return !stopped
        }
        let failure = EtcdHTTP.stream(
            url: endpoint.appendingPathComponent("/v3/watch"), body: EtcdRequest.watchBody(request), headers: headers,
            headTimeout: headTimeout, transport: transport, register: register,
            onStatus: { status = $0 },
            onData: { data in status == 200 && lines.take(data, handle) })
        if stopped { return ended ?? .cancelled }
        if lines.exceeded {
            let limit = EtcdReadLimits.describe(lines.limit)
            return .tooLarge(
                DefaultsError(
                    .cloud,
                    message:
                        "etcd member \(endpoint.absoluteString) sent a watch message larger than \(limit) (no line end within \(lines.limit) bytes) (\(context)); the client reads watch messages of up to \(limit), so it closed the watch and reads the namespace again"
                ))
        }
        // a last message without its newline
        if status == 200, failure == nil, !handle(lines.pending) { return ended ?? .cancelled }
        if status != 200, status != 0 {
            return .failed(DefaultsError(.cloud, message: "etcd answered the watch with HTTP \(status) (\(context))"))
        }
        if let failure, failure.malformed {
            let error = DefaultsError(
                .cloud, message: "etcd member \(endpoint.absoluteString) \(failure.text) (\(context))")
            return failure.tooLarge ? .tooLarge(error) : .failed(error)
        }
        let why = failure.map {
            $0.timedOut ? "no answer within \(EtcdHTTP.describe(seconds: headTimeout)): \($0.text)" : $0.text
        }
        return .failed(
            DefaultsError(
                .cloud,
                message:
                    "the watch on etcd member \(endpoint.absoluteString) ended: \(why ?? "the server closed the stream")"
            ))
    }

    /// Reads one message.
    private func message(_ message: EtcdAnswer) throws(DefaultsError) -> EtcdWatchMessage {
        if let detail = message.errorMessage() {
            throw DefaultsError(.cloud, message: "etcd ended the watch (\(context)): \(detail)")
        }
        guard let result = try message.child("result") else { throw message.malformed("neither 'result' nor 'error'") }
        var read = EtcdWatchMessage(header: try result.optionalHeader(), events: [])
        if result.bool("canceled") {
            read.cancelled = (try result.int64("compact_revision"), result.string("cancel_reason"))
            return read
        }
        let events = try result.children("events")
        guard !events.isEmpty else { return read }  // created, or a progress notification
        read.events.reserveCapacity(events.count)
        for event in events {
            guard let pair = try event.child("kv") else { throw event.malformed("an event without 'kv'") }
            read.events.append((try pair.keyValue(), event.string("type") == "DELETE"))
        }
        return read
    }
}

/// Splits the watch stream into its messages, one per line: a piece read from the stream may end inside a
/// message, hold several, or be a message's newline alone.
struct EtcdMessageLines {
    /// The start of a message whose newline has not arrived.
    private(set) var pending = Data()
    /// The most bytes of one message, without its newline.
    let limit: Int
    /// A message was longer than ``limit``: ``take(_:_:)`` returned false without keeping it.
    private(set) var exceeded = false

    /// A splitter of messages of at most `limit` bytes each.
    init(limit: Int = .max) {
        self.limit = limit
    }

    /// Hands each line that `piece` completes (with what was pending before it) to `handle`, in order,
    /// without the newline, while `handle` returns true; returns false as soon as it returns false, or when
    /// a line is, or would grow, longer than ``limit`` (``exceeded``; checked before anything is kept).
    mutating func take(_ piece: Data, _ handle: (Data) -> Bool) -> Bool {
        // Newlines are looked for in the raw bytes: Data's own index searches, inlined here, check exclusive
        // access to its storage at run time for every byte.
        let base = piece.startIndex
        return piece.withUnsafeBytes { raw -> Bool in
            // What is pending holds no newline: only the new piece can end a line.
            guard let lastNewline = raw.lastIndex(of: UInt8(ascii: "\n")) else {
                guard fits(pending.count + raw.count) else { return false }
                pending.append(piece)
                return true
            }
            var start = 0
            if !pending.isEmpty {
                let first = raw.firstIndex(of: UInt8(ascii: "\n"))!
                guard fits(pending.count + first) else { return false }
                pending.append(piece[base..<base + first])
                let line = pending
                pending = Data()
                guard handle(line) else { return false }
                start = first + 1
            }
            // Usually one whole message, handed over where it is, not copied.
            while start <= lastNewline, let newline = raw[start...lastNewline].firstIndex(of: UInt8(ascii: "\n")) {
                guard fits(newline - start), handle(piece[base + start..<base + newline]) else { return false }
                start = newline + 1
            }
            guard fits(raw.count - lastNewline - 1) else { return false }
            pending = Data(piece[(base + lastNewline + 1)...])
            return true
        }
    }

    /// Whether a line of `count` bytes is within ``limit``; notes ``exceeded`` when not.
    private mutating func fits(_ count: Int) -> Bool {
        if count > limit { exceeded = true }
        return !exceeded
    }
}
