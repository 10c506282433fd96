import Foundation

/// One etcd watch over the JSON gateway: `POST /v3/watch` answered by a chunked stream of JSON objects,
/// each followed by a newline, read as they arrive on the stream's own thread. (A message over about 2 KB
/// comes as one chunk and its newline as the next; the error object that ends a watch has no newline and
/// is read when the stream closes.)
///
/// Each message's events go to `onEvents` in order; the stream ends once, through `onEnd`: the connection
/// broke, the server ended it with an error, or it cancelled the watch (after compaction, with the
/// compacted revision). A message from another cluster than `cluster` expects ends it as failed.
final class EtcdWatchStream: Sendable {
    /// How a watch ended.
    enum End: Sendable {
        case failed(DefaultsError)
        /// The history the watch needed was compacted away up to this revision: re-read and diff.
        case compacted(Int64)
        /// ``cancel()`` was called.
        case cancelled
    }

    let endpoint: URL
    private let transport: EtcdTransport
    private let body: Data
    private let headers: [String: String]
    private let cluster: EtcdClusterCheck
    private let onEvents: @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void
    private let onEnd: @Sendable (End) -> Void
    private let ended = Locked(false)
    private let abort = LockedCallback<Void>()

    init(
        endpoint: URL, transport: EtcdTransport, prefix: String, startRevision: Int64, headers: [String: String],
        cluster: EtcdClusterCheck,
        onEvents: @escaping @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void,
        onEnd: @escaping @Sendable (End) -> Void
    ) {
        self.endpoint = endpoint
        self.transport = transport
        var headers = headers
        // Without it a member that lost its leader keeps the watch open and silent.
        headers["Grpc-Metadata-hasleader"] = "true"
        self.headers = headers
        self.cluster = cluster
        let create: [String: Any] = ["create_request": [
            "key": EtcdRequest.base64(prefix), "range_end": EtcdRequest.prefixEnd(prefix),
            "start_revision": String(startRevision),
        ]]
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
        // A local, not a stored property: a class's stored `var` is checked for exclusive access at run time
        // on every use (3.5% of an observer's CPU).
        var lines = EtcdMessageLines()
        let failure = EtcdHTTP.stream(
            url: endpoint.appendingPathComponent("/v3/watch"), body: body, headers: headers, headTimeout: 2, transport: transport,
            register: { [self] cancel in
                // Set before `ended` is read, as `finish` sets `ended` before it reads this: one of the two
                // sees the other, so a watch ended meanwhile is aborted (by both at worst; that is harmless).
                abort.set { _ in cancel() }
                if ended.withLock({ $0 }) { cancel() }
            },
            onStatus: { status = $0 },
            onData: { [self] data in status == 200 ? receive(data, into: &lines) : false })
        if status == 200, failure == nil { handleLine(lines.pending) }  // a last message without its newline
        if status != 200, status != 0 {
            finish(.failed(DefaultsError(.cloud, message: "etcd answered the watch with HTTP \(status) (\(context))")))
        }
        let why = failure.map { $0.timedOut ? "no answer within 2 s: \($0.text)" : $0.text } ?? "the server closed the stream"
        finish(.failed(DefaultsError(.cloud, message: "the watch on etcd member \(endpoint.absoluteString) ended: \(why)")))
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
    private func receive(_ data: Data, into lines: inout EtcdMessageLines) -> Bool {
        lines.take(data) { handleLine($0) } && !ended.withLock { $0 }
    }

    /// Handles one message (a blank line is none); false once the watch has ended.
    @discardableResult
    private func handleLine(_ line: Data) -> Bool {
        guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { return true }
        if ended.withLock({ $0 }) { return false }
        do {
            try handle(EtcdAnswer(data: line, context: context))
            return true
        } catch {
            finish(.failed(error))
            return false
        }
    }

    private func handle(_ message: EtcdAnswer) throws(DefaultsError) {
        if let detail = message.errorMessage() {
            throw DefaultsError(.cloud, message: "etcd ended the watch (\(context)): \(detail)")
        }
        guard let result = try message.child("result") else { throw message.malformed("neither 'result' nor 'error'") }
        // Every message, the first ("created") included: a re-created cluster is noticed before any event.
        try cluster.verify(result, endpoint: endpoint)
        if result.bool("canceled") {
            let compacted = try result.int64("compact_revision")
            if compacted > 0 { finish(.compacted(compacted)); return }
            throw DefaultsError(.cloud, message: "etcd cancelled the watch (\(context)): \(result.string("cancel_reason") ?? "no reason given")")
        }
        let events = try result.children("events")
        guard !events.isEmpty else { return }  // created, or a progress notification
        var pairs: [(EtcdKeyValue, deleted: Bool)] = []
        for event in events {
            guard let pair = try event.child("kv") else { throw event.malformed("an event without 'kv'") }
            pairs.append((try pair.keyValue(), event.string("type") == "DELETE"))
        }
        onEvents(try result.header(), pairs)
    }
}

/// Splits the watch stream into its messages, one per line: a piece read from the stream may end inside a
/// message, hold several, or be a message's newline alone.
struct EtcdMessageLines {
    /// The start of a message whose newline has not arrived.
    private(set) var pending = Data()

    /// Hands each line that `piece` completes (with what was pending before it) to `handle`, in order,
    /// without the newline, while `handle` returns true; returns false as soon as it returns false.
    mutating func take(_ piece: Data, _ handle: (Data) -> Bool) -> Bool {
        // Newlines are looked for in the raw bytes: Data's own index searches, inlined here, check exclusive
        // access to its storage at run time for every byte.
        let base = piece.startIndex
        return piece.withUnsafeBytes { raw -> Bool in
            // What is pending holds no newline: only the new piece can end a line.
            guard let lastNewline = raw.lastIndex(of: UInt8(ascii: "\n")) else {
                pending.append(piece)
                return true
            }
            var start = 0
            if !pending.isEmpty {
                let first = raw.firstIndex(of: UInt8(ascii: "\n"))!
                pending.append(piece[base..<base + first])
                let line = pending
                pending = Data()
                guard handle(line) else { return false }
                start = first + 1
            }
            // Usually one whole message, handed over where it is, not copied.
            while start <= lastNewline, let newline = raw[start...lastNewline].firstIndex(of: UInt8(ascii: "\n")) {
                guard handle(piece[base + start..<base + newline]) else { return false }
                start = newline + 1
            }
            pending = Data(piece[(base + lastNewline + 1)...])
            return true
        }
    }
}
