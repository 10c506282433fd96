import Foundation

/// ``EtcdWire`` over etcd's native gRPC API (what its own Go client speaks, and what `etcd grpc-proxy`
/// serves): each call is a unary gRPC call (``GRPCStream``) on one HTTP/2 connection per member
/// (``HTTP2Connection``), shared by the calls and the watch as clientv3 shares its connection, opened when
/// first needed and again when it broke, the member sent GOAWAY, or a call on it timed out. Unless told
/// otherwise the connections are the process's (``EtcdGRPCConnectionPool``): every store of the process
/// reaching a member alike calls and watches over the same one. Tokens travel per call (metadata), so
/// stores logged in as different etcd users share too.
///
/// A refusal is the call's gRPC status (``EtcdFailure`` with its code and message).
final class EtcdGRPCWire: EtcdWire {
    /// Plain or TLS, per endpoint, with what a connection reads at most.
    let transport: EtcdTransport
    /// The connections calls and watches go over: the process's shared set for this transport, or the
    /// wire's own.
    let connections: EtcdGRPCConnections

    /// A wire reaching members through `transport`, over connections of its own, or (`sharing`: the
    /// cluster's endpoints) over the process's connections shared by the stores of that cluster.
    init(transport: EtcdTransport, sharing endpoints: [URL]? = nil) {
        self.transport = transport
        connections =
            endpoints.map { EtcdGRPCConnectionPool.shared.connections(to: $0, through: transport) }
            ?? EtcdGRPCConnections(transport: transport)
    }

    /// The gRPC method of a call.
    func name(_ kind: EtcdCallKind) -> String {
        switch kind {
        case .range: "/etcdserverpb.KV/Range"
        case .transaction: "/etcdserverpb.KV/Txn"
        case .leaseGrant: "/etcdserverpb.Lease/LeaseGrant"
        case .status: "/etcdserverpb.Maintenance/Status"
        case .authenticate: "/etcdserverpb.Auth/Authenticate"
        }
    }

    func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
        -> EtcdRangeResult
    {
        let message = EtcdProto.RangeRequest(
            key: Array(request.key.utf8), rangeEnd: request.rangeEnd.map(Array.init) ?? [])
        let answer = try unary(.range, message, EtcdProto.RangeResponse.self, call, whileWaiting: whileWaiting)
        return EtcdRangeResult(
            header: try requiredHeader(answer.header, .range, call), pairs: answer.kvs.map { Self.pair($0) })
    }

    func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdTransactionResult
    {
        let answer = try unary(
            .transaction, Self.message(transaction), EtcdProto.TxnResponse.self, call, whileWaiting: whileWaiting)
        var responses: [EtcdTransactionResult.Response] = []
        responses.reserveCapacity(answer.responses.count)
        for operation in answer.responses {
            switch operation.response {
            case .range(let range)?: responses.append(.range(range.kvs.first.map { Self.pair($0) }))
            case .put?: responses.append(.put)
            case .deleteRange?: responses.append(.delete)
            case .txn?, nil:
                throw .malformed(
                    .malformedEtcdAnswer(
                        context(.transaction, at: call.endpoint),
                        "a transaction's response that is none of range, put, delete"))
            }
        }
        return EtcdTransactionResult(
            header: try requiredHeader(answer.header, .transaction, call), succeeded: answer.succeeded,
            responses: responses)
    }

    func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdLeaseGrant {
        let answer = try unary(
            .leaseGrant, EtcdProto.LeaseGrantRequest(ttl: ttl), EtcdProto.LeaseGrantResponse.self, call,
            whileWaiting: whileWaiting)
        guard answer.id != 0 else {
            let why = answer.error.isEmpty ? "no lease ID in the answer to a lease grant" : answer.error
            throw .malformed(.malformedEtcdAnswer(context(.leaseGrant, at: call.endpoint), why))
        }
        return EtcdLeaseGrant(header: answer.header.map { Self.header($0) }, id: answer.id)
    }

    /// The member's status. A probe (`probing`) of a member with an open connection is an HTTP/2 PING on it,
    /// as etcd's Go client keeps its connections alive: the member's transport answers it without work for
    /// etcd, and a hung member does not answer it at all, while a Status call from every store every probe
    /// interval costs the member of a large fleet most of its CPU (`defaults-bench` group 11). PINGs are
    /// paced to the member's keepalive policy (``EtcdGRPCPingPacing``): a probe between two finds the member
    /// as the last PING did.
    func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdStatus {
        if probing {
            switch connections.probe(call.endpoint) {
            case .answeredRecently:
                return EtcdStatus(header: nil)
            case .ping(let connection):
                whileWaiting()
                let reads = connection.readCount
                do throws(EtcdHTTP.Failure) {
                    _ = try connection.ping(deadline: EtcdHTTP.deadline(after: call.timeout))
                    return EtcdStatus(header: nil)
                } catch {
                    // A member that sent anything meanwhile (other stores' answers and events on the shared
                    // connection, still unread perhaps) answers: its PING's ACK is behind them.
                    if error.timedOut, connection.heardFrom(since: reads) { return EtcdStatus(header: nil) }
                    connections.close(call.endpoint)
                    throw .unreachable(
                        error.sentence(timeout: call.timeout), refused: error.refused, rejected: error.rejected)
                }
            case .noConnection:
                break
            }
        }
        let answer = try unary(
            .status, EtcdProto.StatusRequest(), EtcdProto.StatusResponse.self, call, whileWaiting: whileWaiting)
        return EtcdStatus(header: answer.header.map { Self.header($0) })
    }

    func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdAuthentication
    {
        let answer = try unary(
            .authenticate, EtcdProto.AuthenticateRequest(name: user, password: password),
            EtcdProto.AuthenticateResponse.self, call, whileWaiting: whileWaiting)
        guard !answer.token.isEmpty else {
            throw .malformed(
                .malformedEtcdAnswer(context(.authenticate, at: call.endpoint), "no token in the login answer"))
        }
        return EtcdAuthentication(header: answer.header.map { Self.header($0) }, token: answer.token)
    }

    func watch(
        _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End {
        EtcdGRPCWatch(endpoint: endpoint, connections: connections, limits: transport.limits)
            .run(request, token: token, headTimeout: headTimeout, register: register, receive: receive)
    }

    // MARK: Calls

    /// How long a call waits for its answer before it runs its `whileWaiting` work: a member on a quiet
    /// machine answers a write within a millisecond, and on two cores the member needs them both meanwhile
    /// (`Docs/benchmarks.md`, group 9); a slower answer (a member writing to a slow disk) overlaps the work.
    static let overlapPatience: Duration = .milliseconds(5)

    /// One unary call of `kind` with `request` to `call`'s member, its answer read as `Answer`, all within
    /// the call's timeout; `whileWaiting` runs before a connection is opened, or once the request is sent
    /// and no answer came within ``overlapPatience``.
    /// A call the member never processed (its connection went away first) is sent once more on a new
    /// connection.
    private func unary<Answer: ProtobufMessage>(
        _ kind: EtcdCallKind, _ request: some ProtobufMessage, _ answer: Answer.Type, _ call: EtcdCall,
        whileWaiting: () -> Void
    ) throws(EtcdWireFailure) -> Answer {
        let deadline = EtcdHTTP.deadline(after: call.timeout)
        let bytes = request.encoded()
        var waited = false
        func waiting() {
            if !waited { whileWaiting() }
            waited = true
        }
        var retried = false
        var answerBytes: [UInt8]?
        var readsAtStart: Int?
        while answerBytes == nil {
            do throws(GRPCFailure) {
                let connection = try connections.connection(
                    to: call.endpoint, deadline: deadline, beforeOpening: waiting)
                readsAtStart = connection.readCount
                answerBytes = try GRPCCall.unary(
                    path: name(kind), request: bytes,
                    metadata: GRPCCall.etcdMetadata(token: call.token, requireLeader: false), deadline: deadline,
                    limits: transport.limits, on: connection, afterSending: waiting, patience: Self.overlapPatience)
            } catch {
                switch error {
                case .status(let status):
                    throw .refused(EtcdFailure(code: Int(status.code.rawValue), message: status.message))
                case .transport(let failure):
                    connections.drop(call.endpoint, after: failure, readsAtStart: readsAtStart)
                    if failure.notProcessed, !retried, ContinuousClock.now < deadline {
                        retried = true
                        continue
                    }
                    // A broken answer (HTTP/2's or gRPC's rules, the client's limits) is the member's fault, as the
                    // gateway's broken HTTP is: the next member is asked.
                    throw .unreachable(
                        failure.sentence(timeout: call.timeout), refused: failure.refused, rejected: failure.rejected)
                }
            }
        }
        do throws(ProtobufError) {
            return try Answer(
                decoding: answerBytes ?? [], limits: .init(fieldBytes: transport.limits.answerBytes, depth: 100))
        } catch {
            throw .malformed(
                .malformedEtcdAnswer(
                    context(kind, at: call.endpoint), "an answer that is not a valid \(Answer.protobufName): \(error)"))
        }
    }

    private func requiredHeader(_ header: EtcdProto.ResponseHeader?, _ kind: EtcdCallKind, _ call: EtcdCall)
        throws(EtcdWireFailure) -> EtcdHeader
    {
        guard let header else {
            throw .malformed(.malformedEtcdAnswer(context(kind, at: call.endpoint), "an answer without a header"))
        }
        return Self.header(header)
    }

    // MARK: Messages

    static func header(_ header: EtcdProto.ResponseHeader) -> EtcdHeader {
        EtcdHeader(clusterID: header.clusterID == 0 ? "" : String(header.clusterID), revision: header.revision)
    }

    static func pair(_ pair: EtcdProto.KeyValue, deleted: Bool = false) -> EtcdKeyValue {
        EtcdKeyValue(
            key: String(decoding: pair.key, as: UTF8.self), value: deleted ? nil : Data(pair.value),
            modRevision: pair.modRevision)
    }

    static func message(_ transaction: EtcdTransaction) -> EtcdProto.TxnRequest {
        func operation(_ operation: EtcdTransaction.Operation) -> EtcdProto.RequestOp {
            switch operation {
            case .put(let key, let value, let lease):
                EtcdProto.RequestOp(
                    .put(EtcdProto.PutRequest(key: Array(key.utf8), value: Array(value), lease: lease ?? 0)))
            case .delete(let key): EtcdProto.RequestOp(.deleteRange(EtcdProto.DeleteRangeRequest(key: Array(key.utf8))))
            case .range(let key): EtcdProto.RequestOp(.range(EtcdProto.RangeRequest(key: Array(key.utf8))))
            }
        }
        return EtcdProto.TxnRequest(
            compare: transaction.compares.map {
                EtcdProto.Compare(key: Array($0.key.utf8), .equal, .modRevision($0.modRevision))
            },
            success: transaction.success.map(operation), failure: transaction.failure.map(operation))
    }
}

extension HTTP2Connection: HTTP2ExchangeOpening {}
