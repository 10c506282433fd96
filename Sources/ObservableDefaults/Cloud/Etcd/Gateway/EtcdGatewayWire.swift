import Foundation

/// ``EtcdWire`` over etcd's v3 JSON gateway: each call is a `POST /v3/…` over HTTP/1.1 (``EtcdHTTP``),
/// its body JSON written by ``EtcdRequest``, its answer read by ``EtcdAnswer``; the watch is a chunked
/// stream of JSON lines (``EtcdGatewayWatch``).
///
/// A refusal comes as an HTTP status with `{"error", "message", "code"}`, `code` being the gRPC status
/// (``EtcdFailure/init(status:body:)``).
final class EtcdGatewayWire: EtcdWire {
    /// Plain or TLS, per endpoint; shared by calls, probes and watches.
    let transport: EtcdTransport
    /// Kept-alive connections for calls (probes and watches use their own).
    let connections = EtcdConnectionPool()
    /// ``target(_:_:)``'s, by endpoint and path (a handful: the endpoints times the kinds of calls).
    private let targets = Locked<[TargetKey: (EtcdTarget, context: String)]>([:])

    init(transport: EtcdTransport) {
        self.transport = transport
    }

    /// The gateway's path of a call.
    func name(_ kind: EtcdCallKind) -> String {
        switch kind {
        case .range: "/v3/kv/range"
        case .transaction: "/v3/kv/txn"
        case .leaseGrant: "/v3/lease/grant"
        case .status: "/v3/maintenance/status"
        case .authenticate: "/v3/auth/authenticate"
        }
    }

    func range(_ request: EtcdRangeRequest, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure)
        -> EtcdRangeResult
    {
        let answer = try post(.range, EtcdRequest.rangeBody(request), call, whileWaiting: whileWaiting)
        return try reading { () throws(DefaultsError) in
            EtcdRangeResult(header: try answer.header(), pairs: try answer.keyValues())
        }
    }

    func transaction(_ transaction: EtcdTransaction, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdTransactionResult
    {
        let answer = try post(
            .transaction, EtcdRequest.transactionBody(transaction), call, whileWaiting: whileWaiting)
        return try reading { () throws(DefaultsError) in
            EtcdTransactionResult(
                header: try answer.header(), succeeded: answer.bool("succeeded"),
                responses: try answer.transactionResponses())
        }
    }

    func grantLease(ttl: Int64, _ call: EtcdCall, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdLeaseGrant {
        let answer = try post(.leaseGrant, Data(#"{"TTL":"\#(ttl)"}"#.utf8), call, whileWaiting: whileWaiting)
        return try reading { () throws(DefaultsError) in
            let id = try answer.int64("ID")
            guard id != 0 else { throw answer.malformed("no lease ID in the answer to a lease grant") }
            return EtcdLeaseGrant(header: try answer.optionalHeader(), id: id)
        }
    }

    func status(_ call: EtcdCall, probing: Bool, whileWaiting: () -> Void) throws(EtcdWireFailure) -> EtcdStatus {
        let answer = try post(.status, Data("{}".utf8), call, pooled: !probing, whileWaiting: whileWaiting)
        return try reading { () throws(DefaultsError) in EtcdStatus(header: try answer.optionalHeader()) }
    }

    func authenticate(user: String, password: String, _ call: EtcdCall, whileWaiting: () -> Void)
        throws(EtcdWireFailure) -> EtcdAuthentication
    {
        let body = (try? JSONSerialization.data(withJSONObject: ["name": user, "password": password])) ?? Data()
        let answer = try post(.authenticate, body, call, whileWaiting: whileWaiting)
        return try reading { () throws(DefaultsError) in
            guard let token = answer.string("token") else { throw answer.malformed("no token in the login answer") }
            return EtcdAuthentication(header: try answer.optionalHeader(), token: token)
        }
    }

    func watch(
        _ request: EtcdWatchRequest, at endpoint: URL, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End {
        EtcdGatewayWatch(endpoint: endpoint, transport: transport)
            .run(request, token: token, headTimeout: headTimeout, register: register, receive: receive)
    }

    // MARK: Requests

    /// Reads an answer's fields: what does not fit is the answer's own error.
    private func reading<Result>(_ read: () throws(DefaultsError) -> Result) throws(EtcdWireFailure) -> Result {
        do { return try read() } catch { throw .malformed(error) }
    }

    /// Posts `body` to the member of `call` (over a kept-alive connection unless `pooled` is false) and
    /// parses a `200 OK` answer; anything else is the failure.
    private func post(
        _ kind: EtcdCallKind, _ body: Data, _ call: EtcdCall, pooled: Bool = true, whileWaiting: () -> Void
    ) throws(EtcdWireFailure) -> EtcdAnswer {
        let (target, context) = target(kind, call)
        let outcome = EtcdHTTP.post(
            to: target, body: body, headers: call.token.map { ["Authorization": $0] } ?? [:], timeout: call.timeout,
            transport: transport, pool: pooled ? connections : nil, whileWaiting: whileWaiting)
        switch outcome {
        case .unreachable(let why, let refused, let rejected):
            throw .unreachable(why, refused: refused, rejected: rejected)
        case .answer(200, let data):
            do { return try EtcdAnswer(data: data, context: context) } catch { throw .malformed(error) }
        case .answer(let status, let data):
            throw .refused(EtcdFailure(status: status, body: data))
        }
    }

    /// Where a call of `kind` to `call`'s member goes, and how errors name it ("path at endpoint"); made once
    /// per endpoint and kind.
    private func target(_ kind: EtcdCallKind, _ call: EtcdCall) -> (EtcdTarget, context: String) {
        let key = TargetKey(endpoint: call.index, kind: kind)
        if let known = targets.withLock({ $0[key] }) { return known }
        let made = (
            EtcdTarget(call.endpoint.appendingPathComponent(name(kind))), context: context(kind, at: call.endpoint)
        )
        targets.withLock { $0[key] = made }
        return made
    }

    private struct TargetKey: Hashable {
        /// The index of the endpoint in the configuration.
        var endpoint: Int
        var kind: EtcdCallKind
    }
}

extension EtcdFailure {
    /// A gateway's refusal: an HTTP status with `{"error": "...", "message": "...", "code": N}` (the code is
    /// the gRPC status); a body of another shape (a proxy's page) is quoted in the message.
    init(status: Int, body: Data) {
        let answer = try? EtcdAnswer(data: body, context: "")
        var code: Int?
        if case .integer(let number)? = answer?.object["code"] { code = number }
        self.init(
            code: code,
            message: answer?.string("message") ?? answer?.string("error")
                ?? "HTTP \(status): \(String(decoding: body.prefix(120), as: UTF8.self))",
            httpStatus: status)
    }
}
