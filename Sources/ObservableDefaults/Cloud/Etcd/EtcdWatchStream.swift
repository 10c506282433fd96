import Foundation

/// One etcd watch of the keys under a prefix from a revision on, over a member's ``EtcdWire``, read as its
/// messages arrive: on the stream's own thread, or (over gRPC, after the first message) on the thread that
/// reads the member's connection while the stream's own thread waits (``EtcdGRPCWatch``).
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
        /// A message, or a piece of the stream, was larger than the client reads (``EtcdReadLimits``); its
        /// events were not delivered. Report, re-read and diff: watching from the same revision again would
        /// meet the same message.
        case tooLarge(DefaultsError)
        /// The member closed the connection over something of the client's own that loses nothing (a gRPC
        /// server's GOAWAY 'too_many_pings': the pings are spaced further apart from now on). Watch again
        /// from the last revision, without reporting an error.
        case interrupted
        /// ``cancel()`` was called.
        case cancelled
    }

    let endpoint: URL
    private let wire: any EtcdWire
    private let request: EtcdWatchRequest
    private let token: String?
    private let cluster: EtcdClusterCheck
    /// How long connecting, sending the request and the answer's head may take in all.
    private let headTimeout: TimeInterval
    private let onEvents: @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void
    private let onEnd: @Sendable (End) -> Void
    private let ended = Locked(false)
    private let abort = LockedCallback<Void>()

    /// A watch of the keys under `prefix` from `startRevision` at `endpoint` over `wire`, sending `token`
    /// (`nil`: none); the head of the answer must arrive within `headTimeout` seconds of starting (a quiet
    /// watch may then stay quiet indefinitely).
    init(
        endpoint: URL, wire: any EtcdWire, prefix: String, startRevision: Int64, token: String?,
        cluster: EtcdClusterCheck, headTimeout: TimeInterval = 3,
        onEvents: @escaping @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void,
        onEnd: @escaping @Sendable (End) -> Void
    ) {
        self.endpoint = endpoint
        self.wire = wire
        request = EtcdWatchRequest(prefix: prefix, startRevision: startRevision)
        self.token = token
        self.cluster = cluster
        self.headTimeout = headTimeout
        self.onEvents = onEvents
        self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ObservableDefaults.EtcdWatch"
        thread.start()
    }

    private func run() {
        // A local, not a stored property: a class's stored `var` is checked for exclusive access at run time
        // on every use (3.5% of an observer's CPU).
        var order = EtcdWatchOrder(startRevision: request.startRevision)
        let end = wire.watch(
            request, at: endpoint, token: token, headTimeout: headTimeout,
            register: { [self] cancel in
                // Set before `ended` is read, as `finish` sets `ended` before it reads this: one of the two
                // sees the other, so a watch ended meanwhile is aborted (by both at worst; that is harmless).
                abort.set { _ in cancel() }
                if ended.withLock({ $0 }) { cancel() }
            },
            receive: { [self] message in handle(message, order: &order) })
        finish(end)
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

    /// Handles one message; false once the watch has ended.
    private func handle(_ message: EtcdWatchMessage, order: inout EtcdWatchOrder) -> Bool {
        if ended.withLock({ $0 }) { return false }
        do {
            // Every message, the first ("created") included: a re-created cluster is noticed before any event.
            try cluster.verify(message.header, endpoint: endpoint)
        } catch {
            finish(.failed(error))
            return false
        }
        if let (compacted, reason) = message.cancelled {
            if compacted > 0 {
                finish(.compacted(compacted))
            } else {
                finish(
                    .failed(
                        DefaultsError(
                            .cloud,
                            message: "etcd cancelled the watch (\(context)): \(reason ?? "no reason given")")))
            }
            return false
        }
        guard !message.events.isEmpty else { return true }  // created, or a progress notification
        if let violation = order.take(message.events.lazy.map(\.0.modRevision)) {
            finish(
                .protocolViolation(
                    DefaultsError(
                        .cloud,
                        message:
                            "etcd member \(endpoint.absoluteString) sent watch events out of order: \(violation) (\(context)); the message is ignored, the watch closed and the namespace read again"
                    )))
            return false
        }
        guard let header = message.header else {
            finish(.failed(DefaultsError.malformedEtcdAnswer(context, "the header is missing")))
            return false
        }
        onEvents(header, message.events)
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
