import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The etcd client's one loop over a member's ``EtcdWire`` — fail-over, login and token expiry, the
/// cluster check, what is passed over and what is thrown at once — and the watch's checks, the same for
/// every wire: here over a scripted wire (no network), whose refusals are gRPC statuses as a gRPC wire
/// brings them (no HTTP status). The gateway's wire is tested against real etcd by the other etcd suites.
@Suite struct EtcdWireTests {
    let directory = TemporaryDirectory()
    static let members = [URL(string: "http://10.0.0.1:2379")!, URL(string: "http://10.0.0.2:2379")!]

    /// A wire that answers every call with `respond`'s failure, else a header of cluster `clusterID`; it logs
    /// in with tokens `token-1`, `token-2`, …; a watch hands it `messages` and then ends as failed.
    final class ScriptedWire: EtcdWire {
        struct Sent: Sendable, Equatable {
            var kind: EtcdCallKind
            var endpoint: URL
            var token: String?
        }

        let sent = Locked<[Sent]>([])
        let logins = Locked(0)
        let clusterID: String
        let respond: @Sendable (EtcdCallKind, EtcdCall) -> EtcdWireFailure?
        let messages: [EtcdWatchMessage]

        init(
            clusterID: String = "7", messages: [EtcdWatchMessage] = [],
            respond: @escaping @Sendable (EtcdCallKind, EtcdCall) -> EtcdWireFailure? = { _, _ in nil }
        ) {
            self.clusterID = clusterID
            self.messages = messages
            self.respond = respond
        }

        private func answer(_ kind: EtcdCallKind, _ call: EtcdCall, _ whileWaiting: () -> Void) throws(EtcdWireFailure)
            -> EtcdHeader
        {
            whileWaiting()
            sent.withLock { $0.append(Sent(kind: kind, endpoint: call.endpoint, token: call.token)) }
            if let failure = respond(kind, call) { throw failure }
            return EtcdHeader(clusterID: clusterID, revision: 10)
        }

        func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
            -> EtcdRangeResult
        {
            let header = try answer(.range, call, whileWaiting)
            return EtcdRangeResult(
                header: header, pairs: [EtcdKeyValue(key: request.key, value: Data("1".utf8), modRevision: 9)])
        }

        func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
            throws(EtcdWireFailure) -> EtcdTransactionResult
        {
            EtcdTransactionResult(
                header: try answer(.transaction, call, whileWaiting), succeeded: true,
                responses: transaction.success.map { _ in .put })
        }

        func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
            -> EtcdLeaseGrant
        {
            EtcdLeaseGrant(header: try answer(.leaseGrant, call, whileWaiting), id: ttl)
        }

        func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdStatus {
            EtcdStatus(header: try answer(.status, call, whileWaiting))
        }

        func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
            throws(EtcdWireFailure) -> EtcdAuthentication
        {
            let header = try answer(.authenticate, call, whileWaiting)
            return EtcdAuthentication(header: header, token: "token-\(logins.withLock { $0 += 1; return $0 })")
        }

        func watch(
            _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
            register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
        ) -> EtcdWatchStream.End {
            for message in messages where !receive(message) { return .cancelled }
            return .failed(DefaultsError(.cloud, message: "the scripted watch ended"))
        }

        func name(_ kind: EtcdCallKind) -> String { "\(kind)" }
    }

    private func client(_ wire: ScriptedWire, user: String? = nil) -> EtcdClient {
        EtcdClient(
            configuration: EtcdConfiguration(
                endpoints: Self.members, namespace: "ns", user: user, password: user.map { _ in "secret" },
                stateDirectory: directory.url),
            wire: wire)
    }

    // MARK: The call loop

    @Test func aMemberWithoutALeaderIsPassedOverAndReportedWhenTheNextAnswers() throws {
        let wire = ScriptedWire { _, call in
            call.index == 0 ? .refused(EtcdFailure(code: 14, message: "etcdserver: no leader")) : nil
        }
        let client = client(wire)
        let passedOver = Locked<[String]>([])
        client.passedOver.set { error in passedOver.withLock { $0.append(error.message) } }
        let waited = Locked(0)
        try client.status(whileWaiting: { waited.withLock { $0 += 1 } })
        #expect(wire.sent.withLock { $0 }.map(\.endpoint) == Self.members)
        #expect(
            passedOver.withLock { $0 }
                == ["etcd refused the request (status at http://10.0.0.1:2379): etcdserver: no leader"])
        #expect(client.currentEndpoint == Self.members[1])
        #expect(waited.withLock { $0 } == 1, "the caller's own work runs once, whatever the attempts")
    }

    @Test func anExpiredTokenLogsInAgainOnceOnTheSameMember() throws {
        let refusedOnce = Locked(false)
        let wire = ScriptedWire { kind, call in
            guard kind == .status, call.token == "token-1", !refusedOnce.withLock({ $0 }) else { return nil }
            refusedOnce.withLock { $0 = true }
            return .refused(EtcdFailure(code: 16, message: "etcdserver: invalid auth token"))
        }
        try client(wire, user: "fleet").status()
        #expect(
            wire.sent.withLock { $0 } == [
                .init(kind: .authenticate, endpoint: Self.members[0], token: nil),
                .init(kind: .status, endpoint: Self.members[0], token: "token-1"),
                .init(kind: .authenticate, endpoint: Self.members[0], token: nil),
                .init(kind: .status, endpoint: Self.members[0], token: "token-2")
            ])
    }

    @Test func refusalsNoOtherMemberWouldAnswerAreThrownAtOnceSayingWhatToCheck() {
        let denied = ScriptedWire { kind, _ in
            kind == .transaction ? .refused(EtcdFailure(code: 7, message: "etcdserver: permission denied")) : nil
        }
        let deniedError = #expect(throws: DefaultsError.self) {
            _ = try client(denied, user: "fleet").compareAndSwap(key: "k", value: Data("1".utf8), expected: 0)
        }
        #expect(
            deniedError?.message
                == "etcd denied user 'fleet' access (transaction at http://10.0.0.1:2379): etcdserver: permission denied; the user needs read and write permission on the namespace"
        )
        #expect(denied.sent.withLock { $0 }.map(\.kind) == [.authenticate, .transaction])

        let wrongPassword = ScriptedWire { kind, _ in
            kind == .authenticate
                ? .refused(
                    EtcdFailure(code: 3, message: "etcdserver: authentication failed, invalid user ID or password"))
                : nil
        }
        let loginError = #expect(throws: DefaultsError.self) { try client(wrongPassword, user: "fleet").status() }
        #expect(loginError?.message.hasPrefix("etcd refused the login of user 'fleet' (authenticate at ") == true)
        #expect(loginError?.message.hasSuffix("; check the user and password") == true)
        #expect(wrongPassword.sent.withLock { $0 }.count == 1)
    }

    @Test func everyMemberRefusingConnectionsIsOneDefiniteError() {
        let wire = ScriptedWire { _, _ in
            .unreachable("cannot be reached: connection refused", refused: true, rejected: false)
        }
        let error = #expect(throws: DefaultsError.self) { try client(wire).status() }
        #expect(
            error?.message
                == "etcd members http://10.0.0.1:2379, http://10.0.0.2:2379 cannot be reached: nothing accepts connections there (status)"
        )
        #expect(error.map(EtcdClient.isRefusedEverywhere) == true)
        #expect(wire.sent.withLock { $0 }.count == 2)
    }

    @Test func aMalformedAnswerIsThrownAsItIsWithoutTryingAnotherMember() {
        let broken = DefaultsError.malformedEtcdAnswer("range at http://10.0.0.1:2379", "the header is missing")
        let wire = ScriptedWire { _, _ in .malformed(broken) }
        let error = #expect(throws: DefaultsError.self) { _ = try client(wire).readNamespace() }
        #expect(error == broken)
        #expect(wire.sent.withLock { $0 }.count == 1)
    }

    @Test func anAnswerFromAnotherClusterIsRefusedExceptANamespaceRead() throws {
        let client = client(ScriptedWire(clusterID: "8"))
        client.cluster.expect("7")
        let error = #expect(throws: DefaultsError.self) { try client.status() }
        #expect(error.map(client.cluster.refused(with:)) == true)
        let (header, pairs) = try client.readNamespace()
        #expect(header.clusterID == "8")
        #expect(pairs.map(\.key) == [""], "the namespace is taken off the keys")
    }

    @Test func aRefusedSwapReadsTheKeyWithoutItsNamespace() throws {
        final class RefusingWire: EtcdWire {
            let inner = ScriptedWire()
            func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void)
                throws(EtcdWireFailure) -> EtcdRangeResult
            { try inner.range(request, call, whileWaiting: whileWaiting) }
            func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
                throws(EtcdWireFailure) -> EtcdTransactionResult
            {
                EtcdTransactionResult(header: EtcdHeader(clusterID: "7", revision: 12), succeeded: false, responses: [])
            }
            func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
                -> EtcdLeaseGrant
            { try inner.grantLease(ttl: ttl, call, whileWaiting: whileWaiting) }
            func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure)
                -> EtcdStatus
            { try inner.status(call, probing: probing, whileWaiting: whileWaiting) }
            func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
                throws(EtcdWireFailure) -> EtcdAuthentication
            { try inner.authenticate(user: user, password: password, call, whileWaiting: whileWaiting) }
            func watch(
                _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
                register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
            ) -> EtcdWatchStream.End { .cancelled }
            func name(_ kind: EtcdCallKind) -> String { "\(kind)" }
        }
        let client = EtcdClient(
            configuration: EtcdConfiguration(endpoints: Self.members, namespace: "ns", stateDirectory: directory.url),
            wire: RefusingWire())
        guard case .conflict(let current, let revision) = try client.compareAndSwap(key: "k", value: nil, expected: 3)
        else {
            Issue.record("the refused swap was taken as written")
            return
        }
        #expect(current?.key == "k" && current?.modRevision == 9 && revision == 10)
    }

    // MARK: The watch over any wire

    private static func events(_ revisions: Int64...) -> EtcdWatchMessage {
        EtcdWatchMessage(
            header: EtcdHeader(clusterID: "7", revision: revisions.max() ?? 0),
            events: revisions.map { (EtcdKeyValue(key: "ns/k\($0)", value: Data("1".utf8), modRevision: $0), false) })
    }

    private static let created = EtcdWatchMessage(header: EtcdHeader(clusterID: "7", revision: 4), events: [])

    /// Runs a watch from revision 5 over a scripted wire; the revisions delivered and how it ended.
    private func watch(_ messages: [EtcdWatchMessage], expecting cluster: String = "7") -> ([Int64], String) {
        let check = EtcdClusterCheck()
        check.expect(cluster)
        let delivered = Locked<[Int64]>([])
        let ends = Locked<[String]>([])
        let stream = EtcdWatchStream(
            endpoint: Self.members[0], wire: ScriptedWire(messages: messages), prefix: "ns/", startRevision: 5,
            token: nil, cluster: check,
            onEvents: { _, events in delivered.withLock { $0 += events.map(\.0.modRevision) } },
            onEnd: { end in ends.withLock { $0.append(String(describing: end)) } })
        stream.start()
        #expect(eventually { !ends.withLock { $0 }.isEmpty })
        #expect(ends.withLock { $0 }.count == 1, "a watch ends once")
        return (delivered.withLock { $0 }, ends.withLock { $0 }.first ?? "")
    }

    @Test func aWatchDeliversEventsInOrderAndEndsOnceWhenTheWireEnds() {
        let (delivered, end) = watch([Self.created, Self.events(5, 5), Self.events(8)])
        #expect(delivered == [5, 5, 8])
        #expect(end.contains("the scripted watch ended"), "\(end)")
    }

    @Test func eventsGoingBackEndTheWatchWithoutBeingDelivered() {
        let (delivered, end) = watch([Self.created, Self.events(9), Self.events(6), Self.events(10)])
        #expect(delivered == [9])
        #expect(end.hasPrefix("protocolViolation"), "\(end)")
        #expect(end.contains("an event at revision 6 after one at revision 9"), "\(end)")
    }

    @Test func aCancellationAfterCompactionEndsTheWatchWithTheRevision() {
        var cancelled = Self.created
        cancelled.cancelled = (compactRevision: 12, reason: nil)
        let (_, end) = watch([Self.created, cancelled, Self.events(13)])
        #expect(end == "compacted(12)")
        var refused = Self.created
        refused.cancelled = (compactRevision: 0, reason: "permission denied")
        let (_, other) = watch([refused])
        #expect(
            other.contains("etcd cancelled the watch (watch at http://10.0.0.1:2379): permission denied"), "\(other)")
    }

    @Test func aWatchOfAnotherClusterOrEventsWithoutAHeaderFail() {
        let (delivered, end) = watch([Self.created, Self.events(6)], expecting: "1")
        #expect(delivered.isEmpty)
        #expect(end.contains("answers for cluster 7, not cluster 1"), "\(end)")
        var headless = Self.events(6)
        headless.header = nil
        let (none, missing) = watch([headless])
        #expect(none.isEmpty)
        #expect(missing.contains("malformed answer from etcd (watch at http://10.0.0.1:2379): the header is missing"))
    }

    // MARK: Choosing the transport

    @Test func theTransportIsChosenInTheAddressAndWrittenBack() throws {
        let plain = try EtcdConfiguration(url: "etcd://10.0.0.1:2379/fleet", environment: [:])
        #expect(plain.transport == .grpc, "gRPC is the default")
        let grpc = try EtcdConfiguration(url: "etcd://10.0.0.1:2379/fleet?transport=grpc", environment: [:])
        #expect(grpc.transport == .grpc && grpc.namespace == "fleet")
        #expect(grpc.description == "etcd://10.0.0.1:2379/fleet", "the default is not written")
        #expect(try EtcdConfiguration(url: grpc.description, environment: [:]) == grpc)
        var gateway = grpc
        gateway.transport = .gateway
        #expect(gateway.description == "etcd://10.0.0.1:2379/fleet?transport=gateway")
        #expect(try EtcdConfiguration(url: gateway.description, environment: [:]) == gateway)
        #expect(grpc.debugDescription.contains("transport: ObservableDefaults.EtcdConfiguration.Transport.grpc"))
    }

    @Test func anUnknownTransportIsAClearError() {
        func message(_ address: String) -> String {
            do {
                _ = try EtcdConfiguration(url: address, environment: [:])
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(
            message("etcd://u:pw@10.0.0.1:2379/fleet?transport=quic")
                == "'etcd://u:***@10.0.0.1:2379/fleet?transport=quic' is not a cloud address: 'quic' is not a transport, expected ?transport=grpc or ?transport=gateway; expected etcd://[user:password@]host:port[,host:port…]/namespace[?transport=gateway|grpc] (etcds:// for TLS)"
        )
        #expect(
            message("etcd://10.0.0.1:2379/fleet?mode=fast").contains(
                "the query '?mode=fast' is not understood, expected ?transport=grpc or ?transport=gateway"))
        #expect(message("etcd://10.0.0.1:2379/fleet?transport=grpc") == "accepted")
    }

    // MARK: The gateway's bodies

    @Test func theGatewayWritesTypedRequestsAsItsJSON() throws {
        func parsed(_ body: Data) throws -> NSDictionary {
            try #require(try JSONSerialization.jsonObject(with: body) as? NSDictionary)
        }
        func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        let transaction = EtcdTransaction.writes(
            [(key: "ns/a", value: Data("1".utf8), expected: 4), (key: "ns/b", value: nil, expected: 0)],
            marker: (key: "ns/.m", token: "w-1", lease: 77))
        let expected: NSDictionary = [
            "compare": [
                ["key": b64("ns/a"), "target": "MOD", "result": "EQUAL", "mod_revision": "4"],
                ["key": b64("ns/b"), "target": "MOD", "result": "EQUAL", "mod_revision": "0"]
            ],
            "success": [
                ["request_put": ["key": b64("ns/a"), "value": b64("1")]],
                ["request_delete_range": ["key": b64("ns/b")]],
                ["request_put": ["key": b64("ns/.m"), "value": b64("w-1"), "lease": "77"]]
            ],
            "failure": [
                ["request_range": ["key": b64("ns/a")]], ["request_range": ["key": b64("ns/b")]],
                ["request_range": ["key": b64("ns/.m")]]
            ]
        ]
        #expect(try parsed(EtcdRequest.transactionBody(transaction)) == expected)
        #expect(
            try parsed(EtcdRequest.rangeBody(.prefix("ns/"))) == ["key": b64("ns/"), "range_end": b64("ns0")]
                as NSDictionary)
        #expect(
            try parsed(EtcdRequest.rangeBody(EtcdRangeRequest(key: "ns/k"))) == ["key": b64("ns/k")] as NSDictionary)
        #expect(
            try parsed(EtcdRequest.watchBody(EtcdWatchRequest(prefix: "ns/", startRevision: 12)))
                == ["create_request": ["key": b64("ns/"), "range_end": b64("ns0"), "start_revision": "12"]]
                as NSDictionary)
    }

    @Test func theGatewaysAnswersBecomeTypedResults() throws {
        let answer = try EtcdAnswer(
            data: Data(
                #"{"header":{"cluster_id":"7","revision":"20"},"responses":[{"response_range":{"kvs":[{"key":"bnMvYQ==","mod_revision":"18","value":"MQ=="}]}},{"response_range":{}},{"response_put":{}},{"response_delete_range":{}}]}"#
                    .utf8), context: "/v3/kv/txn at http://h:1")
        let responses = try answer.transactionResponses()
        #expect(responses.count == 4)
        let result = EtcdTransactionResult(header: try answer.header(), succeeded: false, responses: responses)
        #expect(throws: DefaultsError.self) { try result.rangeResponses(context: "x") }
        let ranges = EtcdTransactionResult(
            header: result.header, succeeded: false, responses: Array(responses.prefix(2)))
        let pairs = try ranges.rangeResponses(context: "x")
        #expect(pairs.count == 2 && pairs[0]?.key == "ns/a" && pairs[0]?.modRevision == 18 && pairs[1] == nil)

        let refusal = EtcdFailure(
            status: 401, body: Data(#"{"error":"etcdserver: invalid auth token","code":16}"#.utf8))
        #expect(refusal.isExpiredToken && refusal.httpStatus == 401 && refusal.code == 16)
        let overGRPC = EtcdFailure(code: 16, message: "etcdserver: invalid auth token")
        #expect(overGRPC.isExpiredToken && !overGRPC.isUnavailable)
        #expect(EtcdFailure(code: 4, message: "etcdserver: request timed out").isUnavailable)
    }
}
