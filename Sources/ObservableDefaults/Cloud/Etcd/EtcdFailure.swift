import Foundation

/// A member's refusal of a call: a gRPC status code and message, whichever transport carried it (the JSON
/// gateway's error bodies carry the same code, ``EtcdGatewayWire``), with the HTTP status where only the
/// gateway has one. ``EtcdClient`` decides by it what to do next.
struct EtcdFailure: Sendable {
    /// The gRPC status code (`nil`: the answer had none, e.g. a proxy's HTML page).
    let code: Int?
    let message: String
    /// The HTTP status of a gateway answer (`nil` over gRPC, where the status is ``code``).
    let httpStatus: Int?

    /// A refusal with gRPC status `code` and `message`, and the gateway's `httpStatus` when there is one.
    init(code: Int?, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    /// gRPC 16 Unauthenticated: the token expired or is unknown (log in again).
    var isExpiredToken: Bool { httpStatus == 401 || (code == 16 && message.contains("token")) }
    /// gRPC 14 Unavailable (no leader, member stopping), a deadline the member gave up on, or a gateway
    /// error: another member may serve the call.
    var isUnavailable: Bool {
        code == 14 || httpStatus == 502 || httpStatus == 503 || (code == 4 && message.contains("timed out"))
    }
    /// Whether `error` (thrown for a refused call) says that etcd does not know a lease the call names (it
    /// expired, or the cluster was re-created).
    static func isLeaseNotFound(_ error: DefaultsError) -> Bool { error.message.contains("requested lease not found") }

    /// Whether `error` (thrown for a refused call) says that a transaction was too big: more operations than
    /// the cluster's `--max-txn-ops`, or more bytes than its request limit.
    static func isTransactionTooLarge(_ error: DefaultsError) -> Bool {
        error.message.contains("too many operations in txn request") || error.message.contains("request is too large")
    }

    /// The error for the caller: a failed login and a denied permission say what to check.
    func error(context: String, user: String?) -> DefaultsError {
        if code == 3, message.contains("authentication failed") {
            return DefaultsError(
                .cloud,
                message:
                    "etcd refused the login of user '\(user ?? "")' (\(context)): \(message); check the user and password"
            )
        }
        if code == 7 {
            return DefaultsError(
                .cloud,
                message:
                    "etcd denied user '\(user ?? "")' access (\(context)): \(message); the user needs read and write permission on the namespace"
            )
        }
        return DefaultsError(.cloud, message: "etcd refused the request (\(context)): \(message)")
    }
}
