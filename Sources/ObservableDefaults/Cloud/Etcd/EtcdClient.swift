import Foundation

/// A client of etcd's v3 JSON gateway: requests go to the current endpoint and move on to the next one
/// when a member cannot be reached or has no leader; with credentials it logs in for a token and logs in
/// again when the token expires.
final class EtcdClient: Sendable {
    let configuration: EtcdConfiguration
    private let state = Locked<(endpoint: Int, token: String?)>((0, nil))
    /// Kept-alive connections for ``send(_:_:authorized:timeout:verifyingCluster:whileWaiting:)`` (probes and watches use their own).
    let connections = EtcdConnectionPool()
    /// Plain or TLS, per endpoint; shared by requests, probes and watches.
    let transport: EtcdTransport
    /// The cluster answers must come from: requests, probes and the watch verify every answer's header.
    let cluster = EtcdClusterCheck()
    /// ``target(_:atEndpoint:)``'s, by endpoint and path (a handful: the endpoints times the paths requested).
    private let targets = Locked<[TargetKey: (EtcdTarget, context: String)]>([:])
    /// Runs on the requesting thread with the error of each member a request gives up on and moves on from
    /// to another (unreachable, too slow, a broken answer, no leader), also when the next member answers.
    let passedOver = LockedCallback<DefaultsError>()

    init(configuration: EtcdConfiguration) {
        self.configuration = configuration
        transport = EtcdTransport(
            configuration.tls, limits: EtcdReadLimits(for: configuration.limits, keyPrefix: configuration.keyPrefix))
    }

    /// The endpoint requests and the watch use now.
    var currentEndpoint: URL { configuration.endpoints[state.withLock { $0.endpoint }] }

    /// Moves on from `endpoint` to the next one (unless another caller already did).
    func failOver(from endpoint: URL) {
        state.withLock { state in
            if configuration.endpoints[state.endpoint] == endpoint {
                state.endpoint = (state.endpoint + 1) % configuration.endpoints.count
            }
        }
    }

    /// The `Authorization` header (logging in first when needed, running `whileWaiting` as
    /// ``send(_:_:authorized:timeout:verifyingCluster:whileWaiting:)`` does); empty without credentials.
    func authorizationHeaders(whileWaiting: () -> Void = {}) throws(DefaultsError) -> [String: String] {
        guard configuration.user != nil else { return [:] }
        if let token = state.withLock({ $0.token }) { return ["Authorization": token] }
        let token = try logIn(whileWaiting: whileWaiting)
        return ["Authorization": token]
    }

    private func logIn(whileWaiting: () -> Void) throws(DefaultsError) -> String {
        let body: [String: Any] = ["name": configuration.user ?? "", "password": configuration.password ?? ""]
        let answer = try send("/v3/auth/authenticate", body, authorized: false, whileWaiting: whileWaiting)
        guard let token = answer.string("token") else { throw answer.malformed("no token in the login answer") }
        state.withLock { $0.token = token }
        return token
    }

    /// Sends one request, failing over across every endpoint once; throws the last failure. An answer from
    /// another cluster than ``cluster`` expects is refused (thrown), unless `verifyingCluster` is false.
    /// `whileWaiting` is the caller's own work to overlap with the round trip: it runs once, when the
    /// request would first wait for the network (see ``EtcdHTTP/post(to:body:headers:timeout:transport:pool:whileWaiting:)``).
    func send(
        _ path: String, _ body: [String: Any], authorized: Bool = true, timeout: TimeInterval? = nil,
        verifyingCluster: Bool = true,
        whileWaiting: () -> Void = {}
    ) throws(DefaultsError) -> EtcdAnswer {
        let encoded = (try? JSONSerialization.data(withJSONObject: body)) ?? Data("{}".utf8)
        return try send(
            path, body: encoded, authorized: authorized, timeout: timeout, verifyingCluster: verifyingCluster,
            whileWaiting: whileWaiting)
    }

    /// ``send(_:_:authorized:timeout:verifyingCluster:whileWaiting:)`` with a body already encoded as JSON.
    func send(
        _ path: String, body encoded: Data, authorized: Bool = true, timeout: TimeInterval? = nil,
        verifyingCluster: Bool = true,
        whileWaiting: () -> Void = {}
    ) throws(DefaultsError) -> EtcdAnswer {
        var waited = false
        func waiting() {
            if !waited { whileWaiting() }
            waited = true
        }
        var lastError: DefaultsError?
        var loggedInAgain = false
        var attempts = 0
        var refusedEverywhere = true
        var definiteEverywhere = true  // refused, or the TLS handshake turned down
        while attempts < configuration.endpoints.count {
            let index = state.withLock { $0.endpoint }
            let endpoint = configuration.endpoints[index]
            let (target, context) = target(path, atEndpoint: index)
            let headers = authorized ? try authorizationHeaders(whileWaiting: waiting) : [:]
            let outcome = EtcdHTTP.post(
                to: target, body: encoded, headers: headers,
                timeout: timeout ?? configuration.requestTimeout, transport: transport, pool: connections,
                whileWaiting: waiting)
            switch outcome {
            case .unreachable(let why, let refused, let rejected):
                refusedEverywhere = refusedEverywhere && refused
                definiteEverywhere = definiteEverywhere && (refused || rejected)
                lastError = DefaultsError(.cloud, message: "etcd member \(endpoint.absoluteString) \(why)")
            case .answer(200, let data):
                let answer = try EtcdAnswer(data: data, context: context)
                if verifyingCluster { try cluster.verify(answer, endpoint: endpoint) }
                return answer
            case .answer(let status, let data):
                let failure = EtcdFailure(status: status, body: data)
                if authorized, failure.isExpiredToken, !loggedInAgain, configuration.user != nil {
                    loggedInAgain = true
                    state.withLock { $0.token = nil }
                    continue  // same endpoint, new token
                }
                let error = failure.error(context: context, user: configuration.user)
                guard failure.isUnavailable else { throw error }
                refusedEverywhere = false
                definiteEverywhere = false
                lastError = error
            }
            failOver(from: endpoint)
            attempts += 1
            // The last attempt's error is thrown instead.
            if let lastError, attempts < configuration.endpoints.count { passedOver.current?(lastError) }
        }
        guard var lastError else { throw DefaultsError(.cloud, message: "no etcd endpoint is configured") }
        if refusedEverywhere {
            let members = configuration.endpoints.map(\.absoluteString).joined(separator: ", ")
            lastError = DefaultsError(
                .cloud,
                message:
                    "etcd \(configuration.endpoints.count == 1 ? "member" : "members") \(members) cannot be reached: nothing accepts connections there (\(path))",
                errorNumber: ECONNREFUSED)
        } else if definiteEverywhere {
            lastError.errorNumber = EPROTO  // a TLS handshake was turned down: the member's own reason stays
        }
        throw lastError
    }

    /// Where a request of `path` to the endpoint at `index` goes, and how errors name it ("path at
    /// endpoint"); made once per endpoint and path.
    private func target(_ path: String, atEndpoint index: Int) -> (EtcdTarget, context: String) {
        let key = TargetKey(endpoint: index, path: path)
        if let known = targets.withLock({ $0[key] }) { return known }
        let endpoint = configuration.endpoints[index]
        let made = (EtcdTarget(endpoint.appendingPathComponent(path)), context: "\(path) at \(endpoint.absoluteString)")
        targets.withLock { $0[key] = made }
        return made
    }

    private struct TargetKey: Hashable {
        /// The index of the endpoint in the configuration.
        var endpoint: Int
        var path: String
    }

    /// Whether `error` (thrown by ``send(_:_:authorized:timeout:verifyingCluster:whileWaiting:)``) says that every endpoint refused the
    /// connection, had no route, or turned down the TLS handshake: waiting longer would not help.
    static func isRefusedEverywhere(_ error: DefaultsError) -> Bool {
        error.kind == .cloud && (error.errorNumber == ECONNREFUSED || error.errorNumber == EPROTO)
    }

    /// Whether the member at `endpoint` answers a status request within `timeout`, the whole answer (a hung
    /// or trickling member does not).
    /// An answer from another cluster is responsive, and ``cluster`` remembers it.
    func isResponsive(_ endpoint: URL, timeout: TimeInterval, whileWaiting: () -> Void = {}) -> Bool {
        let headers = (try? authorizationHeaders(whileWaiting: whileWaiting)) ?? [:]
        if case .answer(200, let data) = EtcdHTTP.post(
            url: endpoint.appendingPathComponent("/v3/maintenance/status"), body: Data("{}".utf8),
            headers: headers, timeout: timeout, transport: transport, whileWaiting: whileWaiting)
        {
            if let answer = try? EtcdAnswer(data: data, context: "status probe") {
                try? cluster.verify(answer, endpoint: endpoint)
            }
            return true
        }
        return false
    }

    // MARK: Key-value operations

    /// Every key of the namespace (without the namespace) with its value and revision, and the header.
    /// Any cluster's answer is taken: the caller compares the header's cluster with the store's account.
    func readNamespace(whileWaiting: () -> Void = {}) throws(DefaultsError) -> (EtcdHeader, [EtcdKeyValue]) {
        let prefix = configuration.keyPrefix
        let answer = try send(
            "/v3/kv/range", ["key": EtcdRequest.base64(prefix), "range_end": EtcdRequest.prefixEnd(prefix)],
            verifyingCluster: false,
            whileWaiting: whileWaiting)
        let pairs = try answer.keyValues().map { pair in
            var pair = pair
            pair.key = String(pair.key.dropFirst(prefix.count))
            return pair
        }
        return (try answer.header(), pairs)
    }

    /// The outcome of a compare-and-swap.
    enum SwapResult {
        /// Written at this revision.
        case written(revision: Int64)
        /// The key had changed: its current pair (`nil`: absent) as read at `revision`.
        case conflict(current: EtcdKeyValue?, revision: Int64)
    }

    /// Puts `value` (JSON text; `nil` deletes) under `key` if its modification revision is still
    /// `expected` (0: absent), in one transaction; when that is refused, reads the key's current value.
    func compareAndSwap(key: String, value: Data?, expected: Int64, whileWaiting: () -> Void = {}) throws(DefaultsError)
        -> SwapResult
    {
        let body = EtcdRequest.compareAndSwapBody(key: configuration.keyPrefix + key, value: value, expected: expected)
        let answer = try send("/v3/kv/txn", body: body, whileWaiting: whileWaiting)
        let header = try answer.header()
        if answer.bool("succeeded") { return .written(revision: header.revision) }
        return try current(key)
    }

    /// The key's current pair (`nil`: absent) and the revision it was read at, after a refused swap.
    /// Read later than the refusal, it may be newer still: the server wins either way.
    private func current(_ key: String) throws(DefaultsError) -> SwapResult {
        let answer = try send("/v3/kv/range", ["key": EtcdRequest.base64(configuration.keyPrefix + key)])
        let header = try answer.header()
        guard var current = try answer.keyValues().first else {
            return .conflict(current: nil, revision: header.revision)
        }
        current.key = key
        return .conflict(current: current, revision: header.revision)
    }
}

/// An etcd request error: `{"error": "...", "message": "...", "code": N}` with an HTTP status.
struct EtcdFailure {
    let status: Int
    let code: Int?
    let message: String

    init(status: Int, body: Data) {
        self.status = status
        let answer = try? EtcdAnswer(data: body, context: "")
        if case .integer(let number)? = answer?.object["code"] { code = number } else { code = nil }
        message =
            answer?.string("message") ?? answer?.string("error")
            ?? "HTTP \(status): \(String(decoding: body.prefix(120), as: UTF8.self))"
    }

    /// gRPC 16 Unauthenticated: the token expired or is unknown (log in again).
    var isExpiredToken: Bool { status == 401 || (code == 16 && message.contains("token")) }
    /// gRPC 14 Unavailable (no leader, member stopping), or a gateway error: another member may serve it.
    var isUnavailable: Bool {
        code == 14 || status == 502 || status == 503 || (code == 4 && message.contains("timed out"))
    }

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
