import Foundation
import Testing
@testable import ObservableDefaults

/// gRPC calls over an in-memory HTTP/2 exchange: request headers and framing, answers split and packed
/// over DATA frames, statuses in trailers, trailers-only answers and HTTP statuses, and every way an answer
/// can break gRPC's rules.
@Suite struct GRPCCallTests {
    static let answer = EtcdProtoSamples.rangeAnswer

    /// The failure a call throws, `nil` when it succeeds.
    static func failure<T>(_ body: () throws(GRPCFailure) -> T) -> GRPCFailure? {
        do {
            _ = try body()
            return nil
        } catch { return error }
    }

    static func unary(_ script: [HTTP2Received], limits: EtcdReadLimits = .standard) -> (
        Result<[UInt8], GRPCFailure>, GRPCTestOpener
    ) {
        let opener = GRPCTestOpener(GRPCTestExchange(script))
        let result = Result { () throws(GRPCFailure) in
            try GRPCCall.unary(
                path: EtcdProto.RangeRequest.path, request: EtcdProtoSamples.range.encoded(),
                metadata: GRPCCall.etcdMetadata(token: "tok.en", requireLeader: true),
                deadline: .now + .seconds(5), limits: limits, on: opener)
        }
        return (result, opener)
    }

    static func malformedText(_ result: Result<[UInt8], GRPCFailure>) -> String? {
        guard case .failure(.transport(let failure)) = result, failure.malformed else { return nil }
        return failure.text
    }

    @Test func unaryCallSendsHeadersAndOneFrameAndReturnsTheAnswer() throws {
        let answerBytes = Self.answer.encoded()
        let (result, opener) = Self.unary([
            GRPCScript.head, GRPCScript.data(GRPCScript.frame(answerBytes)), GRPCScript.trailers(0)
        ])
        #expect(try result.get() == answerBytes)
        #expect(opener.path == "/etcdserverpb.KV/Range")
        let names = opener.headers.map(\.name)
        #expect(names == ["content-type", "te", "grpc-timeout", "token", "hasleader"])
        #expect(opener.headers[0].value == "application/grpc")
        #expect(opener.headers[1].value == "trailers")
        #expect(opener.headers[3].value == "tok.en")
        #expect(opener.headers[4].value == "true")
        // 5 s less the moments before the headers were made (however long a loaded machine took): in
        // microseconds, at most 5,000,000.
        let timeout = opener.headers[2].value
        #expect(timeout.hasSuffix("u"))
        #expect((1...5_000_000).contains(Int(timeout.dropLast()) ?? 0))
        let sent = opener.exchange.sent
        #expect(sent.endStream)
        #expect([UInt8](sent.data) == GRPCScript.frame(EtcdProtoSamples.range.encoded()))
        #expect(!opener.exchange.cancelled)
    }

    /// The caller's work to overlap with the round trip runs only when the answer is late: not at all for a
    /// quick one, after `patience` (and before the answer) for a slow one, at once when `patience` reaches past
    /// the deadline.
    @Test func theWorkAfterSendingRunsOnlyWhenTheAnswerIsLate() throws {
        let answerBytes = Self.answer.encoded()
        let rest = [GRPCScript.data(GRPCScript.frame(answerBytes)), GRPCScript.trailers(0)]
        func call(_ exchange: GRPCTestExchange, deadline: Duration, patience: Duration, work: () -> Void) throws
            -> [UInt8]
        {
            try GRPCCall.unary(
                path: EtcdProto.RangeRequest.path, request: EtcdProtoSamples.range.encoded(),
                deadline: .now + deadline, on: GRPCTestOpener(exchange), afterSending: work, patience: patience)
        }
        var runs = 0
        #expect(
            try call(GRPCTestExchange([GRPCScript.head] + rest), deadline: .seconds(10), patience: .seconds(5)) {
                runs += 1
            } == answerBytes)
        #expect(runs == 0, "the work ran although the answer was there")

        // The answer comes only once the work ran: had it not run, the call would time out.
        let slow = GRPCTestExchange([GRPCScript.head])
        let start = ContinuousClock.now
        var waited: Duration?
        #expect(
            try call(slow, deadline: .seconds(5), patience: .milliseconds(50)) {
                waited = ContinuousClock.now - start
                for item in rest { slow.deliver(item) }
            } == answerBytes)
        #expect(waited.map { $0 >= .milliseconds(50) } == true, "the work ran after \(String(describing: waited))")
        #expect(!slow.cancelled)

        runs = 0
        #expect(
            try call(GRPCTestExchange([GRPCScript.head] + rest), deadline: .seconds(1), patience: .seconds(5)) {
                runs += 1
            } == answerBytes)
        #expect(runs == 1, "a patience past the deadline must not skip the work")
    }

    @Test func typedUnaryCallDecodesTheAnswer() throws {
        let opener = GRPCTestOpener(
            GRPCTestExchange([
                GRPCScript.head, GRPCScript.data(GRPCScript.frame(Self.answer.encoded())), GRPCScript.trailers(0)
            ]))
        let answer = try GRPCCall.unary(
            path: EtcdProto.RangeRequest.path, request: EtcdProtoSamples.range,
            answer: EtcdProto.RangeResponse.self, deadline: nil, on: opener)
        #expect(answer == Self.answer)
        #expect(!opener.headers.contains { $0.name == "grpc-timeout" })

        // An answer that is not a RangeResponse (kvs with the wrong wire type).
        let broken = GRPCTestOpener(
            GRPCTestExchange([GRPCScript.head, GRPCScript.data(GRPCScript.frame([0x10, 0x01])), GRPCScript.trailers(0)])
        )
        let failure = Self.failure { () throws(GRPCFailure) in
            try GRPCCall.unary(
                path: EtcdProto.RangeRequest.path, request: EtcdProtoSamples.range,
                answer: EtcdProto.RangeResponse.self, deadline: nil, on: broken)
        }
        guard case .transport(let transport)? = failure else {
            Issue.record("expected a transport failure, got \(String(describing: failure))")
            return
        }
        #expect(transport.malformed)
        #expect(transport.text.contains("not a valid etcdserverpb.RangeResponse"))
        #expect(transport.text.contains("field 2 (kvs)"))
    }

    /// One message split over DATA pieces (inside its prefix and inside its body), and two messages packed in
    /// one piece on a stream.
    @Test func messagesAreCutOutOfDataFramesHoweverSplitOrPacked() throws {
        let frame = GRPCScript.frame(Self.answer.encoded())
        let (result, _) = Self.unary([
            GRPCScript.head, GRPCScript.data(frame[0..<2]), GRPCScript.data(frame[2..<9]),
            GRPCScript.data(frame[9...]), GRPCScript.trailers(0)
        ])
        #expect(try result.get() == Self.answer.encoded())

        let first = EtcdProtoSamples.watchAnswer.encoded()
        let second = EtcdProto.WatchResponse().encoded()  // empty: a 5-byte frame
        let exchange = GRPCTestExchange([
            GRPCScript.head, GRPCScript.data(GRPCScript.frame(first) + GRPCScript.frame(second)),
            GRPCScript.trailers(0)
        ])
        let stream = try GRPCStream.open(path: EtcdProto.WatchRequest.path, deadline: nil, on: GRPCTestOpener(exchange))
        #expect(try stream.receive(deadline: nil) == first)
        #expect(try stream.receive(deadline: nil) == second)
        #expect(try stream.receive(deadline: nil) == nil)
        // After the end, the stream keeps saying so.
        #expect(try stream.receive(deadline: nil) == nil)
    }

    @Test func trailersOnlyErrorIsTheServersStatus() {
        let (result, _) = Self.unary([
            .headers(
                [
                    HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
                    HTTP2Header("grpc-status", "16"), HTTP2Header("grpc-message", "etcdserver: invalid auth token")
                ], endStream: true)
        ])
        guard case .failure(.status(let status)) = result else {
            Issue.record("expected a status, got \(result)")
            return
        }
        #expect(status == GRPCStatus(.unauthenticated, "etcdserver: invalid auth token"))
        #expect(status.description == "status 16 UNAUTHENTICATED: etcdserver: invalid auth token")
    }

    @Test func grpcMessageIsPercentDecoded() {
        let (result, _) = Self.unary([
            GRPCScript.head, GRPCScript.trailers(9, "etcdserver:%20%E2%9C%93 100%25 %zz %4")
        ])
        guard case .failure(.status(let status)) = result else {
            Issue.record("expected a status, got \(result)")
            return
        }
        #expect(status.code == .failedPrecondition)
        #expect(status.message == "etcdserver: ✓ 100% %zz %4")
        #expect(GRPCStatus.decodeMessage("%FF") == "\u{FFFD}")
    }

    @Test func httpStatusesMapToCodes() throws {
        let (result, opener) = Self.unary([
            .headers([HTTP2Header(":status", "503"), HTTP2Header("content-type", "text/plain")], endStream: false)
        ])
        guard case .failure(.status(let status)) = result else {
            Issue.record("expected a status, got \(result)")
            return
        }
        #expect(status == GRPCStatus(.unavailable, "HTTP status 503"))
        #expect(opener.exchange.undelivered == 0)
        #expect(opener.exchange.cancelled)

        // On a stream: the 503's body is not read, the stream is reset.
        let exchange = GRPCTestExchange([
            .headers([HTTP2Header(":status", "404"), HTTP2Header("grpc-message", "no%20route")], endStream: false),
            GRPCScript.data(Array("404 page not found".utf8), endStream: true)
        ])
        let stream = try GRPCStream.open(path: EtcdProto.WatchRequest.path, deadline: nil, on: GRPCTestOpener(exchange))
        let failure = Self.failure { () throws(GRPCFailure) in try stream.receive(deadline: nil) }
        guard case .status(let notFound)? = failure else {
            Issue.record("expected a status, got \(String(describing: failure))")
            return
        }
        #expect(notFound == GRPCStatus(.unimplemented, "HTTP status 404: no route"))
        #expect(exchange.cancelled)
        #expect(exchange.undelivered == 1)
        let table: [(Int, GRPCStatus.Code)] = [
            (400, .internal), (401, .unauthenticated), (403, .permissionDenied), (404, .unimplemented),
            (429, .unavailable), (502, .unavailable), (504, .unavailable), (500, .unknown), (418, .unknown)
        ]
        for (http, code) in table { #expect(GRPCStatus.Code(httpStatus: http) == code, "\(http)") }
        // Codes outside gRPC's 17 read as UNKNOWN; text is no code.
        #expect(GRPCStatus.code(from: "14") == .unavailable)
        #expect(GRPCStatus.code(from: "99") == .unknown)
        #expect(GRPCStatus.code(from: "1x") == nil)
        #expect(GRPCStatus.Code.allCases.count == 17)
    }

    @Test func missingGrpcStatusIsMalformed() {
        let (ended, endedOpener) = Self.unary([
            GRPCScript.head, GRPCScript.data(GRPCScript.frame([])), .headers([], endStream: true)
        ])
        #expect(Self.malformedText(ended)?.contains("ended without a grpc-status") == true)
        #expect(endedOpener.exchange.cancelled)
        let (noTrailers, _) = Self.unary([GRPCScript.head, GRPCScript.data(GRPCScript.frame([]), endStream: true)])
        #expect(Self.malformedText(noTrailers)?.contains("ended without trailers") == true)
        let (cut, _) = Self.unary([GRPCScript.head, GRPCScript.data([0, 0, 0, 0, 9, 1]), GRPCScript.trailers(0)])
        #expect(Self.malformedText(cut)?.contains("ended inside a message (1 of the 9 bytes") == true)
        let (wrongType, _) = Self.unary([
            .headers([HTTP2Header(":status", "200"), HTTP2Header("content-type", "text/html")], endStream: false)
        ])
        #expect(Self.malformedText(wrongType)?.contains("content-type is 'text/html'") == true)
        let (noMessage, _) = Self.unary([GRPCScript.head, GRPCScript.trailers(0)])
        #expect(Self.malformedText(noMessage)?.contains("no message") == true)
        let (twoMessages, _) = Self.unary([
            GRPCScript.head, GRPCScript.data(GRPCScript.frame([]) + GRPCScript.frame([])), GRPCScript.trailers(0)
        ])
        #expect(Self.malformedText(twoMessages)?.contains("more than one message") == true)
        let (dataFirst, _) = Self.unary([GRPCScript.data(GRPCScript.frame([]))])
        #expect(Self.malformedText(dataFirst)?.contains("before the answer's head") == true)
    }

    @Test func compressedMessageIsRefused() {
        let (result, opener) = Self.unary([
            GRPCScript.head, GRPCScript.data([1, 0, 0, 0, 1, 0x78]), GRPCScript.trailers(0)
        ])
        #expect(Self.malformedText(result)?.contains("compressed gRPC message") == true)
        #expect(opener.exchange.cancelled)
        let (flag, _) = Self.unary([GRPCScript.head, GRPCScript.data([7, 0, 0, 0, 0]), GRPCScript.trailers(0)])
        #expect(Self.malformedText(flag)?.contains("compressed flag is 7") == true)
    }

    /// A prefix announcing more than the limit is refused as soon as it is in, before the body arrives.
    @Test func oversizeLengthIsRefusedBeforeBuffering() {
        let (result, opener) = Self.unary(
            [
                GRPCScript.head, GRPCScript.data([0, 0xFF, 0xFF, 0xFF, 0xFF]),
                GRPCScript.data([UInt8](repeating: 0, count: 64)), GRPCScript.trailers(0)
            ], limits: EtcdReadLimits(answerBytes: 32))
        guard case .failure(.transport(let failure)) = result else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
        #expect(failure.tooLarge)
        #expect(failure.text.contains("larger than 32 bytes (its prefix announces 4294967295 bytes)"))
        #expect(opener.exchange.cancelled)
        #expect(opener.exchange.undelivered == 2)
        var reader = GRPCMessageReader(limit: 32)
        #expect((try? reader.append([0, 0, 0, 0, 32] + [UInt8](repeating: 1, count: 32)))?.first?.count == 32)
        #expect((try? reader.append([0, 0, 0, 0, 33])) == nil)
    }

    @Test func deadlineBecomesGrpcTimeout() {
        #expect(GRPCCall.timeout(.zero) == "0n")
        #expect(GRPCCall.timeout(.seconds(-1)) == "0n")
        #expect(GRPCCall.timeout(.nanoseconds(1)) == "1n")
        #expect(GRPCCall.timeout(Duration(secondsComponent: 0, attosecondsComponent: 1)) == "1n")
        #expect(GRPCCall.timeout(.milliseconds(50)) == "50000000n")
        #expect(GRPCCall.timeout(.nanoseconds(99_999_999)) == "99999999n")
        #expect(GRPCCall.timeout(.nanoseconds(100_000_001)) == "100001u")
        #expect(GRPCCall.timeout(.milliseconds(1_500)) == "1500000u")
        #expect(GRPCCall.timeout(.seconds(2 * 3_600)) == "7200000m")
        #expect(GRPCCall.timeout(.seconds(1_000 * 86_400)) == "86400000S")
        #expect(GRPCCall.timeout(.seconds(10 * 365 * 86_400)) == "5256000M")
        #expect(GRPCCall.timeout(.seconds(Int64.max)) == "99999999H")
        for seconds in [0.000_3, 0.7, 3, 95, 4_000, 1e6, 1e8, 1e9] {
            let value = GRPCCall.timeout(.seconds(seconds))
            #expect(value.count <= 9 && value.dropLast().allSatisfy(\.isNumber), "\(value)")
        }
        let now = ContinuousClock.now
        let headers = GRPCCall.requestHeaders(
            metadata: [HTTP2Header("Token", "t")], deadline: now + .seconds(3), now: now)
        #expect(headers.first { $0.name == "grpc-timeout" }?.value == "3000000u")
        #expect(headers.last == HTTP2Header("token", "t"))
    }

    @Test func passedDeadlineAndTransportFailuresAreTransportFailures() {
        let opener = GRPCTestOpener(GRPCTestExchange())
        let late = Self.failure { () throws(GRPCFailure) in
            try GRPCCall.unary(path: "/p", request: [], deadline: .now - .milliseconds(1), on: opener)
        }
        guard case .transport(let failure)? = late else {
            Issue.record("expected a transport failure, got \(String(describing: late))")
            return
        }
        #expect(failure.timedOut)
        #expect(opener.count == 0)

        let refusing = GRPCTestOpener(
            GRPCTestExchange(), failing: EtcdHTTP.Failure("connection refused", refused: true))
        let refused = Self.failure { () throws(GRPCFailure) in
            try GRPCCall.unary(path: "/p", request: [], deadline: nil, on: refusing)
        }
        guard case .transport(let refusal)? = refused else {
            Issue.record("expected a transport failure, got \(String(describing: refused))")
            return
        }
        #expect(refusal.refused)
        #expect(refusal.text == "connection refused")

        // Metadata that cannot be sent, refused before a stream is opened.
        for bad in [
            HTTP2Header("token", "a\r\nb"), HTTP2Header("grpc-status", "0"), HTTP2Header(":path", "/x"),
            HTTP2Header("te", "gzip"), HTTP2Header("blob-bin", "AA"), HTTP2Header("", "v")
        ] {
            let refusedMetadata = Self.failure { () throws(GRPCFailure) in
                try GRPCCall.unary(path: "/p", request: [], metadata: [bad], deadline: nil, on: opener)
            }
            guard case .transport(let problem)? = refusedMetadata else {
                Issue.record("expected a transport failure for \(bad), got \(String(describing: refusedMetadata))")
                continue
            }
            #expect(problem.text.hasPrefix("the call to /p cannot be sent: "), "\(problem.text)")
        }
        #expect(opener.count == 0)
        #expect(GRPCCall.problem(in: [HTTP2Header("Token", "abc.42"), HTTP2Header("hasleader", "true")]) == nil)

        // Nothing arrives before the deadline: the exchange's timeout, cancelled.
        let (silent, silentOpener) = (
            Self.failure { () throws(GRPCFailure) in
                try GRPCCall.unary(path: "/p", request: [], deadline: .now + .milliseconds(50), on: opener)
            }, opener
        )
        guard case .transport(let timeout)? = silent else {
            Issue.record("expected a transport failure, got \(String(describing: silent))")
            return
        }
        #expect(timeout.timedOut)
        #expect(silentOpener.exchange.cancelled)
    }

    /// A watch: create sent without ending the stream, answers received as they come (one waited for while
    /// another thread delivers it), then the trailers' status ends it.
    @Test func watchStreamSendsAndReceivesUntilTheTrailers() throws {
        let exchange = GRPCTestExchange([GRPCScript.head])
        let stream = try GRPCStream.open(
            path: EtcdProto.WatchRequest.path, metadata: GRPCCall.etcdMetadata(token: nil, requireLeader: true),
            deadline: nil, on: GRPCTestOpener(exchange))
        let create = EtcdProto.WatchRequest(.create(EtcdProtoSamples.watchCreate))
        try stream.send(create, deadline: nil)
        #expect(!exchange.sent.endStream)
        #expect([UInt8](exchange.sent.data) == GRPCScript.frame(create.encoded()))

        var created = EtcdProto.WatchResponse()
        created.created = true
        exchange.deliver(GRPCScript.data(GRPCScript.frame(created.encoded())))
        #expect(try stream.receive(EtcdProto.WatchResponse.self, deadline: .now + .seconds(5)) == created)

        // Nothing yet: a short deadline passes.
        let quiet = Self.failure { () throws(GRPCFailure) in try stream.receive(deadline: .now + .milliseconds(20)) }
        guard case .transport(let failure)? = quiet else {
            Issue.record("expected a timeout, got \(String(describing: quiet))")
            return
        }
        #expect(failure.timedOut)

        // Events delivered from another thread while receive waits.
        let events = EtcdProtoSamples.watchAnswer
        let delivery = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            exchange.deliver(GRPCScript.data(GRPCScript.frame(events.encoded())))
        }
        delivery.start()
        #expect(try stream.receive(EtcdProto.WatchResponse.self, deadline: .now + .seconds(5)) == events)

        try stream.send(EtcdProto.WatchRequest(.progress), deadline: nil)
        exchange.deliver(GRPCScript.trailers(14, "etcdserver: no leader"))
        let end = Self.failure { () throws(GRPCFailure) in try stream.receive(deadline: .now + .seconds(5)) }
        guard case .status(let status)? = end else {
            Issue.record("expected a status, got \(String(describing: end))")
            return
        }
        #expect(status == GRPCStatus(.unavailable, "etcdserver: no leader"))
    }

    /// Cancelling a stream makes a receive waiting on another thread return with a failure.
    @Test func cancelEndsAWaitingReceive() throws {
        let exchange = GRPCTestExchange([GRPCScript.head])
        let stream = try GRPCStream.open(path: EtcdProto.WatchRequest.path, deadline: nil, on: GRPCTestOpener(exchange))
        let canceller = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            stream.cancel()
        }
        canceller.start()
        let started = ContinuousClock.now
        let failure = Self.failure { () throws(GRPCFailure) in try stream.receive(deadline: nil) }
        guard case .transport(let transport)? = failure else {
            Issue.record("expected a transport failure, got \(String(describing: failure))")
            return
        }
        #expect(transport.text.contains("cancelled"))
        #expect(ContinuousClock.now - started < .seconds(9))
        #expect(exchange.cancelled)
        let afterwards = Self.failure { () throws(GRPCFailure) in try stream.send([], deadline: nil) }
        #expect(afterwards != nil)
    }
}
