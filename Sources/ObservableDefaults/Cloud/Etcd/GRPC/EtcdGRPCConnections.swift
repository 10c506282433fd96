import Foundation

/// The HTTP/2 connections of an ``EtcdGRPCWire``, one per member, shared by its calls and its watch: opened
/// when first needed, opened again once the one kept broke or the member sent GOAWAY, and closed when a
/// call on it timed out (a hung member holds every stream of the connection: the next call starts afresh).
final class EtcdGRPCConnections: Sendable {
    private let transport: EtcdTransport
    private let kept = Locked<[URL: HTTP2Connection]>([:])

    init(transport: EtcdTransport) {
        self.transport = transport
    }

    /// The connection to `endpoint`'s member, opened by `deadline` when none is usable (running
    /// `beforeOpening` first: the caller's own work to overlap with the handshake).
    func connection(to endpoint: URL, deadline: ContinuousClock.Instant, beforeOpening: () -> Void)
        throws(GRPCFailure) -> HTTP2Connection
    {
        if let connection = kept.withLock({ $0[endpoint] }), connection.isUsable { return connection }
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

    /// The connection to `endpoint`'s member if one is open and usable (none is opened).
    func usable(_ endpoint: URL) -> HTTP2Connection? {
        kept.withLock { $0[endpoint] }.flatMap { $0.isUsable ? $0 : nil }
    }

    /// Forgets and closes the connection to `endpoint` (its member did not answer a PING).
    func close(_ endpoint: URL) {
        kept.withLock { $0.removeValue(forKey: endpoint) }?.close()
    }

    /// Forgets (and closes) the connection to `endpoint` after a call on it failed with `failure`, when the
    /// connection is no longer usable or the call timed out.
    func drop(_ endpoint: URL, after failure: EtcdHTTP.Failure) {
        let dropped = kept.withLock { kept -> HTTP2Connection? in
            guard let connection = kept[endpoint], !connection.isUsable || failure.timedOut else { return nil }
            kept[endpoint] = nil
            return connection
        }
        dropped?.close()
    }

    deinit {
        for connection in kept.withLock({ Array($0.values) }) { connection.close() }
    }
}
