import Foundation

/// The HTTP/2 connections of an ``EtcdGRPCWire``, one per member, shared by its calls and its watch: opened
/// when first needed, opened again once the one kept broke or the member sent GOAWAY, and closed when a
/// call on it timed out (a hung member holds every stream of the connection: the next call starts afresh).
/// Each member's PINGs are paced (``EtcdGRPCPingPacing``).
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
    private let kept = Locked<[URL: HTTP2Connection]>([:])
    private let pacing = Locked<[URL: EtcdGRPCPingPacing]>([:])

    init(transport: EtcdTransport) {
        self.transport = transport
    }

    /// The connection to `endpoint`'s member, opened by `deadline` when none is usable (running
    /// `beforeOpening` first: the caller's own work to overlap with the handshake).
    func connection(to endpoint: URL, deadline: ContinuousClock.Instant, beforeOpening: () -> Void)
        throws(GRPCFailure) -> HTTP2Connection
    {
        if let connection = kept.withLock({ $0[endpoint] }) {
            if connection.isUsable { return connection }
            noteEnd(of: connection, at: endpoint)
        }
        beforeOpening()
        do throws(EtcdHTTP.Failure) {
            let connection = try HTTP2Connection.open(url: endpoint, transport: transport, deadline: deadline)
            kept.withLock { $0[endpoint] }.map { $0 === connection ? () : $0.close() }
            kept.withLock { $0[endpoint] = connection }
            return connection
        } catch {
            throw .transport(error)
        }
    }

    /// How to probe `endpoint`'s member now: ping its open connection, unless the member sent something since
    /// the last probe or was pinged too recently (none is opened).
    func probe(_ endpoint: URL) -> Probe {
        guard let connection = kept.withLock({ $0[endpoint] }) else { return .noConnection }
        guard connection.isUsable else {
            noteEnd(of: connection, at: endpoint)
            return .noConnection
        }
        let reads = connection.readCount, wrote = connection.memberWroteSinceLastPing
        let allowed = pacing.withLock {
            $0[endpoint, default: EtcdGRPCPingPacing()].shouldPing(at: .now, reads: reads, memberWrote: wrote)
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

    /// Forgets and closes the connection to `endpoint` (its member did not answer a PING).
    func close(_ endpoint: URL) {
        kept.withLock { $0.removeValue(forKey: endpoint) }?.close()
    }

    /// Forgets (and closes) the connection to `endpoint` after a call on it failed with `failure`, when the
    /// connection is no longer usable or the call timed out.
    func drop(_ endpoint: URL, after failure: EtcdHTTP.Failure) {
        guard let connection = kept.withLock({ $0[endpoint] }) else { return }
        if !connection.isUsable {
            noteEnd(of: connection, at: endpoint)
        } else if failure.timedOut, forget(connection, at: endpoint) {
            connection.close()
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

    deinit {
        for connection in kept.withLock({ Array($0.values) }) { connection.close() }
    }
}
