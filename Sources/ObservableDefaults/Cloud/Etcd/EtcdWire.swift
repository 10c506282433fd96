import Foundation

/// One member's etcd API as the store uses it, in the store's own terms: typed requests and results, no
/// JSON and no protobuf. ``EtcdClient`` runs every call through one transport-independent loop (fail-over,
/// login, token expiry, cluster verification); a wire carries one call to one member and says how it
/// went. ``EtcdGatewayWire`` speaks etcd's JSON gateway over HTTP/1.1.
///
/// Each call is bounded by ``EtcdCall/timeout`` and runs `whileWaiting` (the caller's own work to overlap
/// with the round trip) at most once, when it would first wait for the network (the gRPC wire: once its
/// answer is ``EtcdGRPCWire/overlapPatience`` late); a caller whose work did not run does it after. A call
/// fails with an ``EtcdWireFailure``: the member could not be reached, refused the call (a gRPC status), or
/// answered with something that breaks the protocol.
protocol EtcdWire: Sendable {
    /// Reads the keys of `request` (with their values and revisions) and the header.
    func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
        -> EtcdRangeResult

    /// Runs one transaction: its comparisons, then its success or failure operations, at one revision.
    func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdTransactionResult

    /// Grants a lease of `ttl` seconds.
    func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdLeaseGrant

    /// The member's status (its header). With `probing`, the call must tell a hung member within its
    /// timeout, on a connection of its own where a shared one could be stuck behind other calls.
    func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdStatus

    /// Logs `user` in with `password` for a token (sent as ``EtcdCall/token`` by later calls).
    func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdAuthentication

    /// Runs one watch on the calling thread until it ends, handing each message to `receive` in order
    /// (until `receive` returns false: the watch ended), and returns how the connection ended (the member
    /// closed it, broke it, ended the watch with an error, or sent something the protocol does not allow).
    ///
    /// Connecting, sending the request and the answer's head must take at most `headTimeout` seconds; the
    /// watch may then stay quiet indefinitely. `register` is called once, before any message, with a
    /// function that aborts the watch from another thread (it does nothing once the watch has ended).
    func watch(
        _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End

    /// How errors name a call of `kind`: the gateway's path ("/v3/kv/txn"), or the gRPC method.
    func name(_ kind: EtcdCallKind) -> String
}

extension EtcdWire {
    /// How errors name a call of `kind` to `endpoint`: "/v3/kv/txn at http://10.0.0.1:2379".
    func context(_ kind: EtcdCallKind, at endpoint: URL) -> String { "\(name(kind)) at \(endpoint.absoluteString)" }
}

/// The kinds of calls a wire carries (error messages name them, ``EtcdWire/name(_:)``).
enum EtcdCallKind: Sendable {
    /// ``EtcdWire/range(_:_:whileWaiting:)``.
    case range
    /// ``EtcdWire/transaction(_:_:whileWaiting:)``.
    case transaction
    /// ``EtcdWire/grantLease(ttl:_:whileWaiting:)``.
    case leaseGrant
    /// ``EtcdWire/status(_:probing:whileWaiting:)``.
    case status
    /// ``EtcdWire/authenticate(user:password:_:whileWaiting:)``.
    case authenticate
}

/// Where one call goes and with what.
struct EtcdCall: Sendable {
    /// The member's position in ``EtcdConfiguration/endpoints`` (a wire may keep things per member by it).
    var index: Int
    /// The member's client URL.
    var endpoint: URL
    /// The token of the logged-in user (`nil`: none).
    var token: String?
    /// How long the whole call may take, in seconds: connecting, sending and the whole answer.
    var timeout: TimeInterval
}

/// How a call failed, whichever transport carried it.
enum EtcdWireFailure: Error {
    /// The member could not be reached, or its answer could not be read as the transport's (refused, reset,
    /// timed out, framing broken, over the client's limits): another member may serve the call. `text`
    /// reads after "etcd member <endpoint> "; `refused`: connecting was refused or had no route;
    /// `rejected`: the TLS handshake was turned down.
    case unreachable(String, refused: Bool, rejected: Bool)
    /// The member answered with a refusal: a gRPC status code and message.
    case refused(EtcdFailure)
    /// The member's answer arrived whole but is not what the protocol promises (a broken message, a
    /// required field missing): the error as it is thrown to the caller, naming the call.
    case malformed(DefaultsError)
}

// MARK: Requests

/// A range read: one key, or every key from ``key`` up to ``rangeEnd`` (a namespace: ``prefix(_:)``).
struct EtcdRangeRequest: Sendable, Equatable {
    /// The whole key (namespace included), or the first of the range.
    var key: String
    /// The end of the range, excluded (`nil`: the single key).
    var rangeEnd: Data?

    /// The single key `key`.
    init(key: String) {
        self.key = key
        rangeEnd = nil
    }

    /// Every key starting with `prefix`.
    static func prefix(_ prefix: String) -> EtcdRangeRequest {
        var request = EtcdRangeRequest(key: prefix)
        request.rangeEnd = prefixEnd(prefix)
        return request
    }

    /// The range end that makes a range cover every key starting with `prefix`: the prefix with its last
    /// byte below 0xFF increased by one (the bytes after it dropped); a zero byte (everything) when none is.
    static func prefixEnd(_ prefix: String) -> Data {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return Data(bytes)
            }
            bytes.removeLast()
        }
        return Data([0])
    }
}

/// A transaction as the store sends them: every comparison is a key's modification revision equal to an
/// expected one (0: the key is absent); then the success operations if all hold, else the failure ones.
struct EtcdTransaction: Sendable {
    /// A key whose modification revision must be `modRevision` (0: absent).
    struct Compare: Sendable {
        /// The whole key (namespace included).
        var key: String
        /// The modification revision it must have (0: the key must be absent).
        var modRevision: Int64
    }

    /// One operation of a branch; keys are whole (namespace included).
    enum Operation: Sendable {
        /// Puts `value` under `key`, attached to `lease` (`nil`: none).
        case put(key: String, value: Data, lease: Int64? = nil)
        /// Deletes `key`.
        case delete(key: String)
        /// Reads `key` (its pair comes back in the answer).
        case range(key: String)
    }

    /// What must hold, all of it, for the success branch to run.
    var compares: [Compare]
    /// The operations when every comparison holds.
    var success: [Operation]
    /// The operations otherwise (none: a refusal only says so).
    var failure: [Operation]

    /// The single compare-and-swap of `key`: puts `value` (`nil`: deletes) if its modification revision is
    /// `expected` (0: absent), otherwise nothing (no failure branch: a refused swap, which is rare, reads the
    /// key in a second call; a transaction without one is answered sooner).
    static func compareAndSwap(key: String, value: Data?, expected: Int64) -> EtcdTransaction {
        EtcdTransaction(
            compares: [Compare(key: key, modRevision: expected)],
            success: [value.map { .put(key: key, value: $0) } ?? .delete(key: key)], failure: [])
    }

    /// One transaction over several whole keys (a batch, or an update): it compares each key's modification
    /// revision with the one its write was based on (0: absent) and then puts each value (`nil`: deletes),
    /// all at one revision; otherwise it reads each key back, so a refusal brings the server's values in the
    /// same answer. With a `marker`, the success branch also puts the marker key to its token (attached to
    /// `lease` when given), and a refusal reads it back: it tells whether an earlier attempt whose answer was
    /// lost was carried out (see `EtcdSync+Updates.swift`).
    static func writes(
        _ writes: [(key: String, value: Data?, expected: Int64)],
        marker: (key: String, token: String, lease: Int64?)? = nil
    ) -> EtcdTransaction {
        var transaction = EtcdTransaction(compares: [], success: [], failure: [])
        let count = writes.count + (marker == nil ? 0 : 1)
        transaction.compares.reserveCapacity(writes.count)
        transaction.success.reserveCapacity(count)
        transaction.failure.reserveCapacity(count)
        for write in writes {
            transaction.compares.append(Compare(key: write.key, modRevision: write.expected))
            transaction.success.append(write.value.map { .put(key: write.key, value: $0) } ?? .delete(key: write.key))
            transaction.failure.append(.range(key: write.key))
        }
        if let marker {
            transaction.success.append(.put(key: marker.key, value: Data(marker.token.utf8), lease: marker.lease))
            transaction.failure.append(.range(key: marker.key))
        }
        return transaction
    }
}

/// A watch of every key under a prefix from a revision on.
struct EtcdWatchRequest: Sendable {
    /// The whole key prefix (the namespace and its `/`).
    var prefix: String
    /// The first revision whose events are wanted.
    var startRevision: Int64
}

// MARK: Results

/// A result that carries the member's header (whose cluster ``EtcdClient`` verifies).
protocol EtcdHeaderCarrying {
    /// The header (`nil`: the answer had none, which passes the cluster check).
    var answerHeader: EtcdHeader? { get }
}

/// The pairs of a range read.
struct EtcdRangeResult: Sendable, EtcdHeaderCarrying {
    /// The header, with the revision the keys were read at.
    var header: EtcdHeader
    /// The pairs, in key order, whole keys.
    var pairs: [EtcdKeyValue]
    var answerHeader: EtcdHeader? { header }
}

/// What a transaction did.
struct EtcdTransactionResult: Sendable, EtcdHeaderCarrying {
    /// The answer of one operation of the branch that ran, in order.
    enum Response: Sendable {
        /// A put was carried out.
        case put
        /// A delete was carried out.
        case delete
        /// The pair a range read (`nil`: the key is absent).
        case range(EtcdKeyValue?)
    }

    /// The header, with the revision the transaction was carried out at (or read at, when refused).
    var header: EtcdHeader
    /// Whether every comparison held (the success branch ran).
    var succeeded: Bool
    /// One per operation of the branch that ran, in order.
    var responses: [Response]
    var answerHeader: EtcdHeader? { header }

    /// The pairs the branch that ran read back, one per operation, in order (`nil`: the key is absent);
    /// an operation of another kind is an error naming `context`: only reads were expected.
    func rangeResponses(context: String) throws(DefaultsError) -> [EtcdKeyValue?] {
        var pairs: [EtcdKeyValue?] = []
        pairs.reserveCapacity(responses.count)
        for response in responses {
            guard case .range(let pair) = response else {
                throw DefaultsError.malformedEtcdAnswer(context, "a response of a refused transaction is not a range")
            }
            pairs.append(pair)
        }
        return pairs
    }
}

/// A granted lease.
struct EtcdLeaseGrant: Sendable, EtcdHeaderCarrying {
    /// The header, if the answer had one.
    var header: EtcdHeader?
    /// The lease's ID (never 0).
    var id: Int64
    var answerHeader: EtcdHeader? { header }
}

/// A member's status.
struct EtcdStatus: Sendable, EtcdHeaderCarrying {
    /// The header, if the answer had one.
    var header: EtcdHeader?
    var answerHeader: EtcdHeader? { header }
}

/// A login.
struct EtcdAuthentication: Sendable, EtcdHeaderCarrying {
    /// The header, if the answer had one.
    var header: EtcdHeader?
    /// The token later calls send.
    var token: String
    var answerHeader: EtcdHeader? { header }
}

/// One message of a watch.
struct EtcdWatchMessage: Sendable {
    /// The header (`nil`: none came; a message with events needs one).
    var header: EtcdHeader?
    /// The events, in order; each pair's key is whole, and a deletion's pair has no value. None: the
    /// watch was created, or a progress notification.
    var events: [(EtcdKeyValue, deleted: Bool)]
    /// The member cancelled the watch: after compaction with the compacted revision (above 0), else for
    /// `reason`.
    var cancelled: (compactRevision: Int64, reason: String?)?
}
