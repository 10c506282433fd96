import Foundation

/// The wire of a transport this build does not have yet (``EtcdConfiguration/Transport/unavailability``):
/// every call and watch fails with the reason, naming the transport and what to choose instead, so a store
/// configured with it reports that on its error channel instead of syncing.
struct EtcdUnbuiltWire: EtcdWire {
    let transport: EtcdConfiguration.Transport

    private var error: DefaultsError {
        DefaultsError(
            .cloud,
            message:
                "the etcd transport '\(transport.rawValue)' cannot be used: \(transport.unavailability ?? "it is not built"); choose EtcdConfiguration.Transport.gateway (?transport=gateway)"
        )
    }

    func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
        -> EtcdRangeResult
    { throw .malformed(error) }

    func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdTransactionResult
    { throw .malformed(error) }

    func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdLeaseGrant {
        throw .malformed(error)
    }

    func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdStatus {
        throw .malformed(error)
    }

    func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdAuthentication
    { throw .malformed(error) }

    func watch(
        _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End { .failed(error) }

    func name(_ kind: EtcdCallKind) -> String { "\(kind)" }
}
