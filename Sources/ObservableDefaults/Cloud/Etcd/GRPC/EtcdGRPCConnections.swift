import Foundation

/// The HTTP/2 connections to etcd's members, one per member, shared by calls and watches as etcd's Go
/// client (clientv3) shares one connection among all of a client's calls and watches: opened when first
/// needed (by one caller at a time per member; the others wait for it and use it), opened again once the
/// one kept broke or the member sent GOAWAY, and closed when a call on it timed out (a hung member holds
/// every stream of the connection: the next call starts afresh). Each member's PINGs are paced
/// (``EtcdGRPCPingPacing``), per connection, whichever store probes.
///
/// By default one set serves every store of the process that reaches its members the same way
/// (``EtcdGRPCConnectionPool``): a thousand stores of one process watch over one connection per member, as
/// Python's and Go's gRPC share one connection per target. A store configured with
/// ``EtcdConfiguration/sharesConnections`` false has a set of its own. The connections close when the last
/// store (``EtcdGRPCWire``) holding the set goes.
final class EtcdGRPCConnections: Sendable {
    /// What a probe of a member's connection should do.
    enum Probe {
        /// Ping this connection.
        case ping(HTTP2Connection)
        /// The connection is open and its member sent something since the last probe, or answered a PING
        /// within the pacing's spacing.
        case answeredRecently
        /// No usable connection is open.
        case noConnection
    }

    private let transport: EtcdTransport
    /// The Watch streams the watches over these connections share.
    let watchChannels = EtcdGRPCWatchChannels()
    private let kept = Locked<[URL: HTTP2Connection]>([:])
    private let pacing = Locked<[URL: EtcdGRPCPingPacing]>([:])
    /// How many connections the set opened so far (for tests).
    let opened = Locked(0)
    /// One lock per member, held while a connection to it is opened: callers that find none usable at once
    /// wait for the one being opened instead of each opening (and closing) their own.
    private let opening = Locked<[URL: NSLock]>([:])
    /// The pool entry this set is, to be forgotten when it goes (`nil`: a store's own set).
    private let pooled: (pool: EtcdGRPCConnectionPool, key: EtcdGRPCConnectionPool.Key)?

    /// A set opening its connections through `transport`; `pooled`: the entry of the pool that shares it.
    init(transport: EtcdTransport, pooled: (EtcdGRPCConnectionPool, EtcdGRPCConnectionPool.Key)? = nil) {
        self.transport = transport
        self.pooled = pooled.map { (pool: $0.0, key: $0.1) }
    }

    /// The connection to `endpoint`'s member, opened by `deadline` when none is usable (running
    /// `beforeOpening` first: the caller's own work to overlap with the handshake, or with waiting for
    /// another caller's).
    func connection(to endpoint: URL, deadline: ContinuousClock.Instant, beforeOpening: () -> Void)
        throws(GRPCFailure) -> HTTP2Connection
    {
        if let connection = usable(endpoint) { return connection }
        beforeOpening()
        let lock = opening.withLock { locks in
            if let lock = locks[endpoint] { return lock }
            let lock = NSLock()
            locks[endpoint] = lock
            return lock
        }
        let left = ContinuousClock.now.duration(to: deadline)
        let seconds = left.timeInterval
        guard lock.lock(before: Date(timeIntervalSinceNow: max(0, seconds))) else {
            var failure = EtcdHTTP.Failure(
                "could not be connected to in time: another call's connection to it was still being opened")
            failure.timedOut = true
            failure.notProcessed = true
            throw .transport(failure)
        }
        defer { lock.unlock() }
        if let connection = usable(endpoint) { return connection }
        do throws(EtcdHTTP.Failure) {
            let connection = try HTTP2Connection.open(url: endpoint, transport: transport, deadline: deadline)
            opened.withLock { $0 += 1 }
            // Only an unusable one can be kept still (a caller found it so, not yet forgotten).
            kept.withLock { $0.updateValue(connection, forKey: endpoint) }?.close()
            return connection
        } catch {
            throw .transport(error)
        }
    }

    /// The kept connection to `endpoint` if it can take new calls; one that cannot is forgotten.
    private func usable(_ endpoint: URL) -> HTTP2Connection? {
        guard let connection = kept.withLock({ $0[endpoint] }) else { return nil }
        if connection.isUsable { return connection }
        noteEnd(of: connection, at: endpoint)
        return nil
    }

    /// How to probe `endpoint`'s member now: ping its open connection, unless the member sent something since
    /// the last probe or was pinged too recently (none is opened). The stores sharing the connection decide
    /// one at a time (under the pacing's lock), so two probes never both take a PING as free.
    func probe(_ endpoint: URL) -> Probe {
        guard let connection = kept.withLock({ $0[endpoint] }) else { return .noConnection }
        guard connection.isUsable else {
            noteEnd(of: connection, at: endpoint)
            return .noConnection
        }
        let allowed = pacing.withLock { pacing in
            let reads = connection.readCount, wrote = connection.memberWroteSinceLastPing
            let allowed = pacing[endpoint, default: EtcdGRPCPingPacing()].shouldPing(
                at: .now, reads: reads, memberWrote: wrote)
            if allowed { connection.notePingSent() }
            return allowed
        }
        return allowed ? .ping(connection) : .answeredRecently
    }

    /// A connection to `endpoint` that can carry nothing more: if its member ended it over the pings, they
    /// are spaced further apart (once per connection).
    private func noteEnd(of connection: HTTP2Connection, at endpoint: URL) {
        if forget(connection, at: endpoint), connection.wasPingedTooOften {
            pacing.withLock { $0[endpoint, default: EtcdGRPCPingPacing()].pingedTooOften() }
        }
    }

    /// Forgets and closes the connection to `endpoint` (its member did not answer a PING, and sent nothing
    /// else either).
    func close(_ endpoint: URL) {
        kept.withLock { $0.removeValue(forKey: endpoint) }?.close(
            reason: "its member did not answer a PING in time (hung or cut off); the next call opens a new one")
    }

    /// Forgets (and closes) the connection to `endpoint` after a call on it failed with `failure`, when the
    /// connection is no longer usable, or the call timed out and the member sent nothing on the connection
    /// since the call began (`reads`: the connection's ``HTTP2Connection/readCount`` then; `nil`: unknown).
    /// Every stream of the connection ends then, also the watches of other stores sharing it: they watch
    /// again (from their last revision) on a new one. A member that answered other streams meanwhile is
    /// slow, not hung: closing would end every store's watch for one late call.
    func drop(_ endpoint: URL, after failure: EtcdHTTP.Failure, readsAtStart reads: Int? = nil) {
        guard let connection = kept.withLock({ $0[endpoint] }) else { return }
        if !connection.isUsable {
            noteEnd(of: connection, at: endpoint)
        } else if failure.timedOut, !(reads.map(connection.heardFrom(since:)) ?? false),
            forget(connection, at: endpoint)
        {
            connection.close(
                reason:
                    "a call on it got no answer in time, and a hung member holds every stream of its connection; the next call opens a new one"
            )
        }
    }

    /// Forgets `connection` if it is still the one kept for `endpoint`; whether it was.
    private func forget(_ connection: HTTP2Connection, at endpoint: URL) -> Bool {
        kept.withLock { kept in
            guard kept[endpoint] === connection else { return false }
            kept[endpoint] = nil
            return true
        }
    }

    /// The connections open now (for tests: how many a process holds).
    var openCount: Int { kept.withLock { $0.values.filter(\.isUsable).count } }

    deinit {
        for connection in kept.withLock({ Array($0.values) }) { connection.close() }
        if let pooled { pooled.pool.forget(pooled.key, ifItIs: ObjectIdentifier(self)) }
    }
}

/// The process's shared ``EtcdGRPCConnections``: one set per cluster address (its endpoints, in any order)
/// and way of reaching members (``EtcdTransport/ConnectionKey``: the TLS identity and trust, and what a
/// connection reads at most), so the stores of a process that reach a member alike share one HTTP/2
/// connection to it. Reference-counted by the wires using a set: the pool holds it weakly, and its
/// connections close when the last wire goes.
final class EtcdGRPCConnectionPool: Sendable {
    /// The pool of the process.
    static let shared = EtcdGRPCConnectionPool()

    /// One set, held weakly; `identifier` tells a set that is going from a newer one under the same key.
    private final class Entry: @unchecked Sendable {  // only read and written under `entries`' lock
        weak var connections: EtcdGRPCConnections?
        let identifier: ObjectIdentifier

        init(_ connections: EtcdGRPCConnections) {
            self.connections = connections
            identifier = ObjectIdentifier(connections)
        }
    }

    /// What the stores sharing a set have in common.
    struct Key: Hashable, Sendable {
        let endpoints: Set<URL>
        let transport: EtcdTransport.ConnectionKey
    }

    private let entries = Locked<[Key: Entry]>([:])

    /// The set the stores reaching the members `endpoints` through `transport` share, made if none is alive.
    func connections(to endpoints: [URL], through transport: EtcdTransport) -> EtcdGRPCConnections {
        let key = Key(endpoints: Set(endpoints), transport: transport.connectionKey)
        return entries.withLock { entries in
            if let alive = entries[key]?.connections { return alive }
            let made = EtcdGRPCConnections(transport: transport, pooled: (self, key))
            entries[key] = Entry(made)
            return made
        }
    }

    /// Removes the entry of `key` if it is still the set `identifier` (which is going).
    fileprivate func forget(_ key: Key, ifItIs identifier: ObjectIdentifier) {
        entries.withLock { entries in
            if entries[key]?.identifier == identifier { entries[key] = nil }
        }
    }

    /// How many sets are alive or going (a set's entry goes with it; for tests).
    var count: Int { entries.withLock { $0.count } }
}
