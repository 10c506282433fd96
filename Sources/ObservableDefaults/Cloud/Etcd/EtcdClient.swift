import Foundation

/// A client of an etcd cluster over a member's ``EtcdWire`` (the JSON gateway, ``EtcdGatewayWire``; the
/// configuration's ``EtcdConfiguration/transport`` chooses): calls go to the current endpoint and move on to
/// the next one when a member cannot be reached or has no leader; with credentials it logs in for a token
/// and logs in again when the token expires; every answer's header is checked against ``cluster``. All of
/// this is the same whichever wire carries the calls.
final class EtcdClient: Sendable {
    let configuration: EtcdConfiguration
    private let state = Locked<(endpoint: Int, token: String?)>((0, nil))
    /// Plain or TLS, per endpoint, with what a connection reads at most; shared by every call and watch.
    let transport: EtcdTransport
    /// Carries each call to one member.
    let wire: any EtcdWire
    /// The cluster answers must come from: calls, probes and the watch verify every answer's header.
    let cluster = EtcdClusterCheck()
    /// Runs on the requesting thread with the error of each member a call gives up on and moves on from
    /// to another (unreachable, too slow, a broken answer, no leader), also when the next member answers.
    let passedOver = LockedCallback<DefaultsError>()

    /// A client of the cluster `configuration` names, over the wire of its ``EtcdConfiguration/transport``
    /// (`wire`: another one, for tests).
    init(configuration: EtcdConfiguration, wire: (any EtcdWire)? = nil) {
        self.configuration = configuration
        let transport = EtcdTransport(
            configuration.tls, limits: EtcdReadLimits(for: configuration.limits, keyPrefix: configuration.keyPrefix))
        self.transport = transport
        self.wire = wire ?? Self.wire(for: configuration, transport: transport)
    }

    /// The wire of `configuration`'s ``EtcdConfiguration/transport``.
    private static func wire(for configuration: EtcdConfiguration, transport: EtcdTransport) -> any EtcdWire {
        switch configuration.transport {
        case .gateway: EtcdGatewayWire(transport: transport)
        case .grpc:
            EtcdGRPCWire(transport: transport, sharing: configuration.sharesConnections ? configuration.endpoints : nil)
        }
    }

    /// The endpoint calls and the watch use now.
    var currentEndpoint: URL { configuration.endpoints[state.withLock { $0.endpoint }] }

    /// Moves on from `endpoint` to the next one (unless another caller already did).
    func failOver(from endpoint: URL) {
        state.withLock { state in
            if configuration.endpoints[state.endpoint] == endpoint {
                state.endpoint = (state.endpoint + 1) % configuration.endpoints.count
            }
        }
    }

    /// The token to send (logging in first when needed, running `whileWaiting` as
    /// ``call(_:authorized:timeout:verifyingCluster:whileWaiting:_:)`` does); `nil` without credentials.
    func token(whileWaiting: () -> Void = {}) throws(DefaultsError) -> String? {
        guard configuration.user != nil else { return nil }
        if let token = state.withLock({ $0.token }) { return token }
        return try logIn(whileWaiting: whileWaiting)
    }

    private func logIn(whileWaiting: () -> Void) throws(DefaultsError) -> String {
        let (user, password) = (configuration.user ?? "", configuration.password ?? "")
        let login = try call(.authenticate, authorized: false, whileWaiting: whileWaiting) {
            call, waiting throws(EtcdWireFailure) in
            try wire.authenticate(user: user, password: password, call, whileWaiting: waiting)
        }
        state.withLock { $0.token = login.token }
        return login.token
    }

    /// Makes one call over ``wire``, failing over across every endpoint once; throws the last failure. An
    /// answer from another cluster than ``cluster`` expects is refused (thrown), unless `verifyingCluster`
    /// is false. `whileWaiting` is the caller's own work to overlap with the round trip: it runs at most
    /// once, when the call would first wait for the network (see ``EtcdWire``); if it did not, the caller
    /// does the work after.
    func call<Answer: EtcdHeaderCarrying>(
        _ kind: EtcdCallKind, authorized: Bool = true, timeout: TimeInterval? = nil, verifyingCluster: Bool = true,
        whileWaiting: () -> Void = {},
        _ perform: (EtcdCall, _ whileWaiting: () -> Void) throws(EtcdWireFailure) -> Answer
    ) throws(DefaultsError) -> Answer {
        // `perform` gets `whileWaiting` (through `waiting`), which the compiler cannot see is not kept.
        try withoutActuallyEscaping(whileWaiting) { whileWaiting throws(DefaultsError) in
            try call(kind, authorized, timeout, verifyingCluster, whileWaiting, perform)
        }
    }

    private func call<Answer: EtcdHeaderCarrying>(
        _ kind: EtcdCallKind, _ authorized: Bool, _ timeout: TimeInterval?, _ verifyingCluster: Bool,
        _ whileWaiting: @escaping () -> Void,
        _ perform: (EtcdCall, _ whileWaiting: () -> Void) throws(EtcdWireFailure) -> Answer
    ) throws(DefaultsError) -> Answer {
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
            let token = authorized ? try token(whileWaiting: waiting) : nil
            let call = EtcdCall(
                index: index, endpoint: endpoint, token: token, timeout: timeout ?? configuration.requestTimeout)
            var answer: Answer?
            do throws(EtcdWireFailure) {
                answer = try perform(call, waiting)
            } catch {
                switch error {
                case .unreachable(let why, let refused, let rejected):
                    refusedEverywhere = refusedEverywhere && refused
                    definiteEverywhere = definiteEverywhere && (refused || rejected)
                    lastError = DefaultsError(.cloud, message: "etcd member \(endpoint.absoluteString) \(why)")
                case .malformed(let error):
                    throw error
                case .refused(let failure):
                    if authorized, failure.isExpiredToken, !loggedInAgain, configuration.user != nil {
                        loggedInAgain = true
                        state.withLock { $0.token = nil }
                        continue  // same endpoint, new token
                    }
                    let error = failure.error(context: wire.context(kind, at: endpoint), user: configuration.user)
                    guard failure.isUnavailable else { throw error }
                    refusedEverywhere = false
                    definiteEverywhere = false
                    lastError = error
                }
            }
            if let answer {
                if verifyingCluster { try cluster.verify(answer.answerHeader, endpoint: endpoint) }
                return answer
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
                    "etcd \(configuration.endpoints.count == 1 ? "member" : "members") \(members) cannot be reached: nothing accepts connections there (\(wire.name(kind)))",
                errorNumber: ECONNREFUSED)
        } else if definiteEverywhere {
            lastError.errorNumber = EPROTO  // a TLS handshake was turned down: the member's own reason stays
        }
        throw lastError
    }

    /// Whether `error` (thrown by ``call(_:authorized:timeout:verifyingCluster:whileWaiting:_:)``) says that
    /// every endpoint refused the connection, had no route, or turned down the TLS handshake: waiting longer
    /// would not help.
    static func isRefusedEverywhere(_ error: DefaultsError) -> Bool {
        error.kind == .cloud && (error.errorNumber == ECONNREFUSED || error.errorNumber == EPROTO)
    }

    /// Whether the member at `endpoint` answers a status call within `timeout`, the whole answer (a hung
    /// or trickling member does not).
    /// An answer from another cluster is responsive, and ``cluster`` remembers it.
    func isResponsive(_ endpoint: URL, timeout: TimeInterval, whileWaiting: () -> Void = {}) -> Bool {
        let token = try? token(whileWaiting: whileWaiting)
        let index = configuration.endpoints.firstIndex(of: endpoint) ?? 0
        let call = EtcdCall(index: index, endpoint: endpoint, token: token ?? nil, timeout: timeout)
        do throws(EtcdWireFailure) {
            let status = try wire.status(call, probing: true, whileWaiting: whileWaiting)
            try? cluster.verify(status.header, endpoint: endpoint)
            return true
        } catch {
            // A member that answers, even with a malformed answer, is not hung.
            if case .malformed = error { return true }
            return false
        }
    }

    // MARK: Calls

    /// The member's status; another cluster's answer is refused (the round's check that a member serves).
    @discardableResult
    func status(whileWaiting: () -> Void = {}) throws(DefaultsError) -> EtcdStatus {
        try call(.status, whileWaiting: whileWaiting) { call, waiting throws(EtcdWireFailure) in
            try wire.status(call, probing: false, whileWaiting: waiting)
        }
    }

    /// Grants a lease of `ttl` seconds; its ID.
    func grantLease(ttl: Int64, whileWaiting: () -> Void = {}) throws(DefaultsError) -> Int64 {
        try call(.leaseGrant, whileWaiting: whileWaiting) { call, waiting throws(EtcdWireFailure) in
            try wire.grantLease(ttl: ttl, call, whileWaiting: waiting)
        }.id
    }

    /// Runs `transaction`.
    func transaction(_ transaction: EtcdTransaction, whileWaiting: () -> Void = {}) throws(DefaultsError)
        -> EtcdTransactionResult
    {
        try call(.transaction, whileWaiting: whileWaiting) { call, waiting throws(EtcdWireFailure) in
            try wire.transaction(transaction, call, whileWaiting: waiting)
        }
    }

    /// Reads `request`'s keys; with `verifyingCluster` false, any cluster's answer is taken.
    func range(_ request: EtcdRangeRequest, verifyingCluster: Bool = true, whileWaiting: () -> Void = {})
        throws(DefaultsError) -> EtcdRangeResult
    {
        try call(.range, verifyingCluster: verifyingCluster, whileWaiting: whileWaiting) {
            call, waiting throws(EtcdWireFailure) in
            try wire.range(request, call, whileWaiting: waiting)
        }
    }

    /// A watch of the namespace from `startRevision` at the current endpoint (not started), with the
    /// current token (none when logging in fails: the watch then fails, and the next round logs in).
    func watch(
        from startRevision: Int64, onEvents: @escaping @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void,
        onEnd: @escaping @Sendable (EtcdWatchStream.End) -> Void
    ) -> EtcdWatchStream {
        EtcdWatchStream(
            endpoint: currentEndpoint, wire: wire, prefix: configuration.keyPrefix, startRevision: startRevision,
            token: (try? token()) ?? nil, cluster: cluster, onEvents: onEvents, onEnd: onEnd)
    }

    // MARK: Key-value operations

    /// Every key of the namespace (without the namespace) with its value and revision, and the header.
    /// Any cluster's answer is taken: the caller compares the header's cluster with the store's account.
    func readNamespace(whileWaiting: () -> Void = {}) throws(DefaultsError) -> (EtcdHeader, [EtcdKeyValue]) {
        let prefix = configuration.keyPrefix
        let result = try range(.prefix(prefix), verifyingCluster: false, whileWaiting: whileWaiting)
        let pairs = result.pairs.map { pair in
            var pair = pair
            pair.key = String(pair.key.dropFirst(prefix.count))
            return pair
        }
        return (result.header, pairs)
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
        let swap = EtcdTransaction.compareAndSwap(key: configuration.keyPrefix + key, value: value, expected: expected)
        let result = try transaction(swap, whileWaiting: whileWaiting)
        if result.succeeded { return .written(revision: result.header.revision) }
        return try current(key)
    }

    /// The key's current pair (`nil`: absent) and the revision it was read at, after a refused swap.
    /// Read later than the refusal, it may be newer still: the server wins either way.
    private func current(_ key: String) throws(DefaultsError) -> SwapResult {
        let result = try range(EtcdRangeRequest(key: configuration.keyPrefix + key))
        guard var current = result.pairs.first else { return .conflict(current: nil, revision: result.header.revision) }
        current.key = key
        return .conflict(current: current, revision: result.header.revision)
    }
}
