import Foundation

/// One etcd watch over the JSON gateway: `POST /v3/watch` answered by a chunked stream of JSON objects,
/// each followed by a newline, read as they arrive on the stream's own thread. (A message over about 2 KB
/// comes as one chunk and its newline as the next; the error object that ends a watch has no newline and
/// is read when the stream closes.)
///
/// Each message's events go to `onEvents` in order; the stream ends once, through `onEnd`: the connection
/// broke, the server ended it with an error, or it cancelled the watch (after compaction, with the
/// compacted revision). A message from another cluster than `cluster` expects ends it as failed; events out
/// of order (``EtcdWatchOrder``) or a message larger than the transport's limit (``EtcdReadLimits``) end it
/// too, without delivering that message: the watch cannot be followed past it, and the namespace is to be
/// read again.
final class EtcdWatchStream: Sendable {
    /// How a watch ended.
    enum End: Sendable {
        case failed(DefaultsError)
        /// The history the watch needed was compacted away up to this revision: re-read and diff.
        case compacted(Int64)
        /// The member broke what etcd guarantees of a watch (its events out of revision order, or older than
        /// the revision it started from); that message's events were not delivered. Report, re-read and diff.
        case protocolViolation(DefaultsError)
        /// A message, or a chunk of the stream, was larger than the client reads (``EtcdReadLimits``); its
        /// events were not delivered. Report, re-read and diff: watching from the same revision again would
        /// meet the same message.
        case tooLarge(DefaultsError)
        /// ``cancel()`` was called.
        case cancelled
    }

    let endpoint: URL
    private let transport: EtcdTransport
    private let body: Data
    private let headers: [String: String]
    private let cluster: EtcdClusterCheck
    private let startRevision: Int64
    /// How long connecting, sending the request and the answer's head may take in all.
    private let headTimeout: TimeInterval
    private let onEvents: @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void
    private let onEnd: @Sendable (End) -> Void
    private let ended = Locked(false)
    private let abort = LockedCallback<Void>()

    /// A watch of the keys under `prefix` from `startRevision` at `endpoint`; the head of the answer must
    /// arrive within `headTimeout` seconds of starting (a quiet watch may then stay quiet indefinitely).
    init(
        endpoint: URL, transport: EtcdTransport, prefix: String, startRevision: Int64, headers: [String: String],
        cluster: EtcdClusterCheck, headTimeout: TimeInterval = 3,
        onEvents: @escaping @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void,
        onEnd: @escaping @Sendable (End) -> Void
    ) {
        self.endpoint = endpoint
        self.startRevision = startRevision
        self.headTimeout = headTimeout
        self.transport = transport
        var headers = headers
        // Without it a member that lost its leader keeps the watch open and silent.
        headers["Grpc-Metadata-hasleader"] = "true"
        self.headers = headers
        self.cluster = cluster
        let create: [String: Any] = [
            "create_request": [
                "key": EtcdRequest.base64(prefix), "range_end": EtcdRequest.prefixEnd(prefix),
                "start_revision": String(startRevision)
            ]
        ]
        body = (try? JSONSerialization.data(withJSONObject: create)) ?? Data()
        self.onEvents = onEvents
        self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ObservableDefaults.EtcdWatch"
        thread.start()
    }

    private func run() {
        var status = 0
        // Locals, not stored properties: a class's stored `var` is checked for exclusive access at run time
        // on every use (3.5% of an observer's CPU).
        var lines = EtcdMessageLines(limit: transport.limits.answerBytes)
        var order = EtcdWatchOrder(startRevision: startRevision)
        let failure = EtcdHTTP.stream(
            url: endpoint.appendingPathComponent("/v3/watch"), body: body, headers: headers, headTimeout: headTimeout,
            transport: transport,
            register: { [self] cancel in
                // Set before `ended` is read, as `finish` sets `ended` before it reads this: one of the two
                // sees the other, so a watch ended meanwhile is aborted (by both at worst; that is harmless).
                abort.set { _ in cancel() }
                if ended.withLock({ $0 }) { cancel() }
            },
            onStatus: { status = $0 },
            onData: { [self] data in status == 200 ? receive(data, into: &lines, order: &order) : false })
        // a last message without its newline
        if status == 200, failure == nil { handleLine(lines.pending, order: &order) }
        if status != 200, status != 0 {
            finish(.failed(DefaultsError(.cloud, message: "etcd answered the watch with HTTP \(status) (\(context))")))
        }
        if let failure, failure.malformed {
            let error = DefaultsError(
                .cloud, message: "etcd member \(endpoint.absoluteString) \(failure.text) (\(context))")
            finish(failure.tooLarge ? .tooLarge(error) : .failed(error))
            return
        }
        let why = failure.map {
            $0.timedOut ? "no answer within \(EtcdHTTP.describe(seconds: headTimeout)): \($0.text)" : $0.text
        }
        finish(
            .failed(
                DefaultsError(
                    .cloud,
                    message:
                        "the watch on etcd member \(endpoint.absoluteString) ended: \(why ?? "the server closed the stream")"
                )))
    }

    /// Ends the watch; `onEnd(.cancelled)` follows unless it ended already.
    func cancel() { finish(.cancelled) }

    private func finish(_ end: End) {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        abort.current?(())
        onEnd(end)
    }

    private var context: String { "watch at \(endpoint.absoluteString)" }

    /// Takes in a piece of the stream; false once the watch has ended.
    private func receive(_ data: Data, into lines: inout EtcdMessageLines, order: inout EtcdWatchOrder) -> Bool {
        guard lines.take(data, { handleLine($0, order: &order) }) else {
            if lines.exceeded {
                let limit = EtcdReadLimits.describe(lines.limit)
                finish(
                    .tooLarge(
                        DefaultsError(
                            .cloud,
                            message:
                                "etcd member \(endpoint.absoluteString) sent a watch message larger than \(limit) (no line end within \(lines.limit) bytes) (\(context)); the client reads watch messages of up to \(limit), so it closed the watch and reads the namespace again"
                        )))
            }
            return false
        }
        return !ended.withLock { $0 }
    }

    /// Handles one message (a blank line is none); false once the watch has ended.
    @discardableResult
    private func handleLine(_ line: Data, order: inout EtcdWatchOrder) -> Bool {
        guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { return true }
        if ended.withLock({ $0 }) { return false }
        do {
            return try handle(EtcdAnswer(data: line, context: context), order: &order)
        } catch {
            finish(.failed(error))
            return false
        }
    }

    /// Handles one message; false when it ended the watch.
    private func handle(_ message: EtcdAnswer, order: inout EtcdWatchOrder) throws(DefaultsError) -> Bool {
        if let detail = message.errorMessage() {
            throw DefaultsError(.cloud, message: "etcd ended the watch (\(context)): \(detail)")
        }
        guard let result = try message.child("result") else { throw message.malformed("neither 'result' nor 'error'") }
        // Every message, the first ("created") included: a re-created cluster is noticed before any event.
        try cluster.verify(result, endpoint: endpoint)
        if result.bool("canceled") {
            let compacted = try result.int64("compact_revision")
            if compacted > 0 { finish(.compacted(compacted)); return false }
            throw DefaultsError(
                .cloud,
                message: "etcd cancelled the watch (\(context)): \(result.string("cancel_reason") ?? "no reason given")"
            )
        }
        let events = try result.children("events")
        guard !events.isEmpty else { return true }  // created, or a progress notification
        var pairs: [(EtcdKeyValue, deleted: Bool)] = []
        for event in events {
            guard let pair = try event.child("kv") else { throw event.malformed("an event without 'kv'") }
            pairs.append((try pair.keyValue(), event.string("type") == "DELETE"))
        }
        if let violation = order.take(pairs.lazy.map(\.0.modRevision)) {
            finish(
                .protocolViolation(
                    DefaultsError(
                        .cloud,
                        message:
                            "etcd member \(endpoint.absoluteString) sent watch events out of order: \(violation) (\(context)); the message is ignored, the watch closed and the namespace read again"
                    )))
            return false
        }
        onEvents(try result.header(), pairs)
        return true
    }
}

/// What etcd guarantees of the events of one watch, checked message by message: their revisions never go
/// down (events at the same revision, one transaction's, are fine; a later message never has older events
/// than an earlier one), and none is older than the revision the watch started from.
struct EtcdWatchOrder {
    /// The lowest revision the next event may have.
    private(set) var lowest: Int64
    /// The revision of the last event taken (`nil`: none yet), for messages.
    private var last: Int64?
    private let startRevision: Int64

    init(startRevision: Int64) {
        self.startRevision = startRevision
        lowest = startRevision
    }

    /// Takes in one message's event revisions, in the order they came; returns what breaks the order (and
    /// takes in none of them then), else `nil`.
    mutating func take(_ revisions: some Sequence<Int64>) -> String? {
        var lowest = self.lowest
        var last = self.last
        for revision in revisions {
            if revision < lowest {
                if let last {
                    return "an event at revision \(revision) after one at revision \(last), expected revisions in order"
                }
                return "an event at revision \(revision), older than revision \(startRevision) the watch started from"
            }
            lowest = revision
            last = revision
        }
        self.lowest = lowest
        self.last = last
        return nil
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
