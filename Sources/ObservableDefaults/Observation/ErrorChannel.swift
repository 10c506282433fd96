/// What a problem that persists on an error channel is about: a store has at most one problem per topic,
/// which stays in its ``ErrorChannel/current`` list until it is cleared, and whose end is published as
/// ``DefaultsErrorEvent/recovered(_:)``.
///
/// One enum for both halves, so each problem a store can be in is named in one place. The order of the
/// cases is the order of ``ErrorChannel/current``.
enum ErrorTopic: Hashable, Comparable, Sendable {
    // A suite's problems.

    /// The suite's file cannot be used: it does not parse, or cannot be read yet.
    case suiteFile
    /// Pending changes cannot be written to the suite's file.
    case suiteWrite
    /// Outside changes to the suite's file cannot be seen (its directory is gone or cannot be watched).
    case suiteWatch
    /// The suite's file is empty: every key reads its default until it holds a suite again.
    case suiteEmpty
    /// A file of one of the suite's other layers (source `index`, see ``LayerSource``) cannot be used: it
    /// does not parse, is not trusted, or cannot be read. The layer keeps its last good values meanwhile.
    case layerFile(index: Int)
    /// A file of a key-per-file layer (source `index`) passed over: too large, or a symlink out of the volume.
    case layerKeyFile(index: Int, name: String)

    // A cloud store's problems.

    /// `OBSERVABLE_DEFAULTS_CLOUD` cannot be used.
    case cloudConfiguration
    /// No cloud is configured: values are kept and never synced.
    case notSyncing
    /// The state directory is not trusted, so the store keeps no local copy.
    case untrustedStateDirectory
    /// The cluster cannot be reached, or a member misbehaves.
    case connection
    /// The cluster answering is not the one the store's values came from, or refuses the credentials.
    case account
    /// The local copy cannot be written.
    case localCopySave
    /// The local copy could not be read at start and is not read yet.
    case localCopyUnread
    /// Something the reading of a local copy found (a copy set aside, an unreadable slot), `index` in the
    /// order found.
    case localCopyFinding(LocalCopyReading, index: Int)
    /// The server's value of `key` does not decode, until the key holds one that does.
    case undecodableValue(key: String)

    /// Which reading of a local copy found a problem.
    enum LocalCopyReading: Comparable, Sendable {
        case atStart, late, ofEndedProcess
    }

    /// Whether `new`, reported while `old` persists under this topic, is a new problem to publish: a
    /// suite's problem when it says something else (a write failing again the same way, with another lock
    /// holder named, is not), a cloud store's never (one outage is one error, whatever member it names).
    func isNews(_ new: DefaultsError, over old: DefaultsError) -> Bool {
        switch self {
        case .suiteFile, .suiteWatch, .suiteEmpty, .layerFile, .layerKeyFile: new != old
        case .suiteWrite: new.kind != old.kind || new.errorNumber != old.errorNumber
        default: false
        }
    }
}

/// A store's error channel: the problems that persist now (one per ``ErrorTopic``), the errors published
/// while nobody listened, the last error, and who hears errors and their ends. Used by both halves.
///
/// A value kept under its owner's lock: its methods change the channel and return an ``ErrorDelivery``
/// that the owner sends once the lock is released.
///
/// Nothing is silent for want of a listener: the first handler is told at once every event published
/// before any handler listened (the last ``unheardLimit``: a problem that came and went before anyone
/// observed is heard as its error and its recovery), and every handler every problem that persists.
struct ErrorChannel: Sendable {
    typealias Handler = @Sendable (DefaultsErrorEvent) -> Void

    /// How many errors published while nobody listened are kept for the first handler.
    static let unheardLimit = 64

    private var problems: [ErrorTopic: DefaultsError] = [:]
    private var unheard: [DefaultsErrorEvent] = []
    private var handlers: [Int: Handler] = [:]
    private var lastToken = 0
    /// The last error published.
    private(set) var lastError: DefaultsError?

    /// The problems that persist now, in the order of their topics.
    var current: [DefaultsError] { problems.sorted { $0.key < $1.key }.map(\.value) }

    /// The problem of `topic`, if it persists.
    func problem(_ topic: ErrorTopic) -> DefaultsError? { problems[topic] }

    // MARK: Handlers

    /// Adds a handler; the delivery tells it each event nobody heard, then each problem that persists (once:
    /// one it heard among those events is not told again).
    mutating func add(_ handler: @escaping Handler) -> (token: Int, delivery: ErrorDelivery) {
        lastToken += 1
        handlers[lastToken] = handler
        var events = unheard
        unheard = []
        for problem in current where !events.contains(.occurred(problem)) { events.append(.occurred(problem)) }
        return (lastToken, ErrorDelivery(events: events, handlers: [handler]))
    }

    /// Removes the handler of `token` and returns it, for the caller to release once its lock is released:
    /// a handler may hold the last reference to its store, whose deinit takes that lock.
    mutating func removeHandler(_ token: Int) -> Handler? {
        handlers.removeValue(forKey: token)
    }

    // MARK: Errors

    /// Publishes `error`; with a `topic`, it also persists until ``clear(_:)``: while it does, an error of
    /// the same topic replaces it, and is published only if ``ErrorTopic/isNews(_:over:)`` says so.
    mutating func report(_ error: DefaultsError, topic: ErrorTopic? = nil) -> ErrorDelivery {
        guard let topic else { return publish(error) }
        let old = problems.updateValue(error, forKey: topic)
        if let old, !topic.isNews(error, over: old) { return ErrorDelivery() }
        return publish(error)
    }

    /// Keeps `error` as the problem of `topic` without publishing it (its owner decides whether it is news).
    mutating func keep(_ error: DefaultsError, as topic: ErrorTopic) {
        problems[topic] = error
    }

    /// Publishes `error` (kept for the first handler when nobody listens).
    mutating func publish(_ error: DefaultsError) -> ErrorDelivery {
        lastError = error
        return deliver([.occurred(error)])
    }

    /// Ends the problem of `topic`, if there is one; the delivery says it is over.
    mutating func clear(_ topic: ErrorTopic) -> ErrorDelivery {
        guard !problems.isEmpty, let ended = problems.removeValue(forKey: topic) else { return ErrorDelivery() }
        return deliver([.recovered(ended)])
    }

    /// Ends every problem whose topic `isOver` says is over, in the order of their topics.
    mutating func clear(where isOver: (ErrorTopic) -> Bool) -> ErrorDelivery {
        guard !problems.isEmpty else { return ErrorDelivery() }  // the usual case, on every watch event
        let ended = problems.keys.filter(isOver).sorted().compactMap { problems.removeValue(forKey: $0) }
        return ended.isEmpty ? ErrorDelivery() : deliver(ended.map { .recovered($0) })
    }

    /// The delivery of `events` to the handlers; while there are none, the events are kept for the first.
    private mutating func deliver(_ events: [DefaultsErrorEvent]) -> ErrorDelivery {
        if handlers.isEmpty {
            unheard += events
            if unheard.count > Self.unheardLimit { unheard.removeFirst(unheard.count - Self.unheardLimit) }
        }
        return ErrorDelivery(events: events, handlers: Array(handlers.values))
    }
}

/// Events of an ``ErrorChannel`` and the handlers to tell, sent once the channel's lock is released.
struct ErrorDelivery: Sendable {
    var events: [DefaultsErrorEvent] = []
    var handlers: [ErrorChannel.Handler] = []

    /// Whether there is nothing to send.
    var isEmpty: Bool { events.isEmpty || handlers.isEmpty }

    /// Adds `other`'s events, from the same channel under the same lock (so told to the same handlers).
    mutating func append(_ other: ErrorDelivery) {
        events += other.events
        if handlers.isEmpty { handlers = other.handlers }
    }

    /// Tells each handler each event, in order.
    func send() {
        for event in events { for handler in handlers { handler(event) } }
    }
}
