import Foundation

/// Idle kept-alive connections, at most one per member (`scheme://host:port`), for requests that follow each other.
/// A connection is taken out for one request and put back when its answer was read completely.
final class EtcdConnectionPool: Sendable {
    private let idle = Locked<[String: EtcdHTTP.Connection]>([:])
    /// How many requests went over a connection kept from an earlier one.
    let reuses = Locked(0)

    func take(_ member: String) -> EtcdHTTP.Connection? {
        let connection = idle.withLock { $0.removeValue(forKey: member) }
        if connection != nil { reuses.withLock { $0 += 1 } }
        return connection
    }

    /// Keeps `connection` for the next request to `member` (closing one kept already).
    func keep(_ connection: EtcdHTTP.Connection, for member: String) {
        idle.withLock { $0.updateValue(connection, forKey: member) }?.close()
    }

    /// Closes every idle connection.
    func closeAll() {
        for connection in idle.withLock({ idle in
            defer { idle = [:] }; return Array(idle.values)
        }) { connection.close() }
    }

    deinit { closeAll() }
}
