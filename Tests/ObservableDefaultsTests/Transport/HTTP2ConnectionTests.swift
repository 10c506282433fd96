import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The HTTP/2 connection against a scripted server (``HTTP2ScriptedServer``): the hostile cases — an oversize
/// frame, a window that never opens, endless CONTINUATION, GOAWAY mid-stream, RST_STREAM, no SETTINGS, a bad
/// preface, PUSH_PROMISE, random frames — each a clear failure within its deadline, and PINGs, flow control
/// and streams working as RFC 9113 says.
@Suite struct HTTP2ConnectionTests {
    static let grpcHeaders = [HTTP2Header("content-type", "application/grpc"), HTTP2Header("te", "trailers")]

    static func deadline(_ seconds: Double = 20) -> ContinuousClock.Instant { .now + .seconds(seconds) }

    static func open(_ server: HTTP2ScriptedServer, seconds: Double = 20) throws(EtcdHTTP.Failure) -> HTTP2Connection {
        try HTTP2Connection.open(url: server.url, transport: EtcdTransport(), deadline: deadline(seconds))
    }

    /// The failure `body` throws, or `nil` (recorded as an issue) when it throws none.
    static func failure<T>(_ body: () throws(EtcdHTTP.Failure) -> T, sourceLocation: SourceLocation = #_sourceLocation)
        -> EtcdHTTP.Failure?
    {
        do {
            _ = try body()
            Issue.record("expected a failure", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// Receives until the stream fails; the failure (or `nil` if it ended without one).
    static func failureReceiving(_ exchange: any HTTP2Exchange) -> EtcdHTTP.Failure? {
        for _ in 0..<1000 {
            do { _ = try exchange.receive(deadline: deadline()) } catch { return error }
        }
        return nil
    }

    @Test func aUnaryExchangeSendsItsHeadersAndReadsHeadDataAndTrailers() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings([(3, 100)])
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            var decoder = HPACKDecoder(maximumListSize: 65536)
            let list = (try? decoder.decode(headers.payload)) ?? []
            let path = list.first { $0.name == ":path" }?.value ?? "?"
            guard peer.readRequest(stream: headers.stream) else { return }
            peer.sendHeaders(stream: headers.stream, [(":status", "200"), ("content-type", "application/grpc")])
            peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: headers.stream, payload: Array(path.utf8)))
            peer.sendHeaders(stream: headers.stream, [("grpc-status", "0")], endStream: true)
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(
            path: "/test.Service/Call", headers: Self.grpcHeaders, deadline: Self.deadline())
        try exchange.send(Data([0, 0, 0, 0, 0]), endStream: true, deadline: Self.deadline())
        #expect(
            try exchange.receive(deadline: Self.deadline())
                == .headers(
                    [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")], endStream: false))
        #expect(
            try exchange.receive(deadline: Self.deadline()) == .data(Array("/test.Service/Call".utf8), endStream: false)
        )
        #expect(
            try exchange.receive(deadline: Self.deadline())
                == .headers([HTTP2Header("grpc-status", "0")], endStream: true))
        #expect(connection.isUsable)
    }

    @Test func aRequestWithItsWholeBodyIsOneWriteOfHeadersAndDataEndingTheStream() throws {
        let request = Locked<[HTTP2Frame]>([])
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }),
                let data = peer.readFrame(timeout: .seconds(30))
            else { return }
            request.withLock { $0 = [headers, data] }
            peer.sendHeaders(stream: headers.stream, [(":status", "200"), ("content-type", "application/grpc")])
            peer.sendHeaders(stream: headers.stream, [("grpc-status", "0")], endStream: true)
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        // The preface with the client's SETTINGS, then the acknowledgement of the server's.
        #expect(eventually(timeout: .seconds(30)) { connection.writeCount == 2 })
        let body: [UInt8] = [0, 0, 0, 0, 3, 1, 2, 3]
        let exchange = try connection.exchange(
            path: "/test.Service/Call", headers: Self.grpcHeaders, body: body, deadline: Self.deadline())
        #expect(connection.writeCount == 3)
        #expect(try exchange.receive(deadline: Self.deadline()).isHead)
        #expect(
            try exchange.receive(deadline: Self.deadline())
                == .headers([HTTP2Header("grpc-status", "0")], endStream: true))
        let frames = request.withLock { $0 }
        #expect(frames.map(\.type) == [HTTP2Frame.headers, HTTP2Frame.data])
        #expect(frames.first?.has(HTTP2Frame.endHeaders) == true)
        #expect(frames.first?.has(HTTP2Frame.endStream) == false)
        #expect(frames.last?.payload == body)
        #expect(frames.last?.has(HTTP2Frame.endStream) == true)
        #expect(frames.last?.stream == frames.first?.stream)
    }

    /// The connection's encoder reuses the fields of the last header block that did not change: what each
    /// call sends must still be its own headers — a refreshed token reaches the wire with the next call, a
    /// call without a token sends none, and every call its own path and `grpc-timeout`.
    @Test func eachCallsHeadersReachTheWireWhenTheLastBlocksFieldsAreReused() throws {
        let calls = [
            ("/etcdserverpb.KV/Txn", "token.one"), ("/etcdserverpb.KV/Txn", "token.one"),
            ("/etcdserverpb.KV/Txn", "token.two"), ("/etcdserverpb.KV/Range", "token.two"),
            ("/etcdserverpb.KV/Txn", nil), ("/etcdserverpb.KV/Txn", "token.three")
        ]
        let received = Locked<[[HTTP2Header]]>([])
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            // One decoder for the connection, as a server keeps it.
            var decoder = HPACKDecoder(maximumListSize: 65536)
            for _ in calls {
                guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }),
                    let list = try? decoder.decode(headers.payload)
                else { return }
                received.withLock { $0.append(list) }
                guard peer.readRequest(stream: headers.stream) else { return }
                peer.sendHeaders(stream: headers.stream, [(":status", "200"), ("content-type", "application/grpc")])
                peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: headers.stream, payload: [0, 0, 0, 0, 0]))
                peer.sendHeaders(stream: headers.stream, [("grpc-status", "0")], endStream: true)
            }
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        for (path, token) in calls {
            let answer = try GRPCCall.unary(
                path: path, request: [], metadata: GRPCCall.etcdMetadata(token: token, requireLeader: false),
                deadline: Self.deadline(), on: connection)
            #expect(answer.isEmpty)
        }
        let lists = received.withLock { $0 }
        #expect(lists.count == calls.count)
        for (list, (path, token)) in zip(lists, calls) {
            #expect(list.first { $0.name == ":path" }?.value == path)
            #expect(list.filter { $0.name == "token" }.map(\.value) == (token.map { [$0] } ?? []))
            #expect(list.contains { $0.name == "grpc-timeout" && $0.value.hasSuffix("u") })
            #expect(list.map(\.name).prefix(6) == [":method", ":scheme", ":path", ":authority", "content-type", "te"])
        }
    }

    @Test func aBodyLargerThanTheMembersWindowFollowsItsHeadersAsTheWindowOpens() throws {
        let received = Locked<[UInt8]>([])
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings([(4, 4)])  // INITIAL_WINDOW_SIZE 4: the body cannot go with the headers
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            guard let first = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.data }) else { return }
            received.withLock { $0 += first.payload }
            peer.send(HTTP2Multiplexer.windowUpdate(stream: headers.stream, 100))
            while let frame = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.data }) {
                received.withLock { $0 += frame.payload }
                if frame.has(HTTP2Frame.endStream) { break }
            }
            peer.sendHeaders(stream: headers.stream, [(":status", "200"), ("content-type", "application/grpc")])
            peer.sendHeaders(stream: headers.stream, [("grpc-status", "0")], endStream: true)
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let body = Array(UInt8(0)..<UInt8(12))
        let exchange = try connection.exchange(
            path: "/p", headers: Self.grpcHeaders, body: body, deadline: Self.deadline())
        #expect(try exchange.receive(deadline: Self.deadline()).isHead)
        #expect(received.withLock { $0 } == body)
    }

    @Test func aConsumerRunsOnTheReaderThreadAndMayWaitForAnotherAnswerOnTheSameConnection() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let watch = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            // Once the client is consuming: what arrived before would be taken on its own thread.
            Thread.sleep(forTimeInterval: 0.5)
            peer.sendHeaders(stream: watch.stream, [(":status", "200"), ("content-type", "application/grpc")])
            peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: watch.stream, payload: [1]))
            // The consumer of the first DATA opens a call on the same connection and waits for its answer.
            guard
                let call = peer.next(
                    timeout: .seconds(30), { $0.type == HTTP2Frame.headers && $0.stream != watch.stream }),
                peer.readRequest(stream: call.stream)
            else { return }
            peer.sendHeaders(stream: call.stream, [(":status", "200")])
            peer.send(HTTP2Frame(type: HTTP2Frame.data, flags: HTTP2Frame.endStream, stream: call.stream, payload: [2]))
            peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: watch.stream, payload: [3]))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let watch = try connection.exchange(path: "/w", headers: Self.grpcHeaders, deadline: Self.deadline())
        let seen = Locked<[String]>([])
        let caller = pthread_self()
        try watch.consume { item in
            guard case .data(let data, _) = item else { return true }
            let here = pthread_equal(pthread_self(), caller) != 0 ? "the calling thread" : "another thread"
            seen.withLock { $0.append("\(Array(data)) on \(here)") }
            guard data == [1] else { return false }
            // Only a thread reading this connection can bring the answer, and this one is busy here.
            do {
                let call = try connection.exchange(
                    path: "/c", headers: Self.grpcHeaders, body: [0], deadline: Self.deadline())
                _ = try call.receive(deadline: Self.deadline())
                if case .data(let answer, let end) = try call.receive(deadline: Self.deadline()) {
                    seen.withLock { $0.append("answer \(Array(answer)), ended: \(end)") }
                }
            } catch {
                seen.withLock { $0.append("failed: \(error)") }
            }
            return true
        }
        #expect(
            seen.withLock { $0 } == [
                "[1] on another thread", "answer [2], ended: true", "[3] on another thread"
            ])
        #expect(connection.isUsable)
    }

    @Test func aConsumedStreamThatFailsEndsTheConsumeWithTheFailureAfterWhatCameBefore() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let watch = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            peer.sendHeaders(stream: watch.stream, [(":status", "200"), ("content-type", "application/grpc")])
            peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: watch.stream, payload: [1]))
            peer.send(
                HTTP2Frame(
                    type: HTTP2Frame.resetStream, stream: watch.stream,
                    payload: HTTP2Multiplexer.code(HTTP2ErrorCode.internalError)))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let watch = try connection.exchange(path: "/w", headers: Self.grpcHeaders, deadline: Self.deadline())
        let seen = Locked<[UInt8]>([])
        let failure = Self.failure { () throws(EtcdHTTP.Failure) in
            try watch.consume { item in
                if case .data(let data, _) = item { seen.withLock { $0 += data } }
                return true
            }
        }
        #expect(seen.withLock { $0 } == [1])
        #expect(failure?.text.contains("RST_STREAM") == true, "\(failure?.text ?? "")")
    }

    @Test func aPingFromTheServerIsAnsweredAndTheClientsPingIsAcknowledged() throws {
        let answered = Locked(false)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            let payload: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
            peer.send(HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: payload))
            // Answers the client's own PING, and looks for the ACK of its own.
            while let frame = peer.readFrame(timeout: .seconds(30)) {
                if frame.type == HTTP2Frame.ping, frame.has(HTTP2Frame.ack) {
                    answered.withLock { $0 = frame.payload == payload }
                } else if frame.type == HTTP2Frame.ping {
                    peer.send(
                        HTTP2Frame(type: HTTP2Frame.ping, flags: HTTP2Frame.ack, stream: 0, payload: frame.payload))
                }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let roundTrip = try connection.ping(deadline: Self.deadline())
        #expect(roundTrip < .seconds(20))
        #expect(
            eventually(timeout: .seconds(30)) { answered.withLock { $0 } }, "the server's PING was not acknowledged")
    }

    /// A server's PING is acknowledged with the client's next write, after that write's frames (gRPC's
    /// bandwidth estimator pings when a request's DATA arrives; an ACK sent at once is a packet of its own).
    @Test func aServersPingIsAcknowledgedAfterTheFramesOfTheClientsNextWrite() throws {
        let frames = Locked<[HTTP2Frame]>([])
        let payload: [UInt8] = [8, 7, 6, 5, 4, 3, 2, 1]
        let server = try HTTP2ScriptedServer { peer in
            guard peer.completeHandshake() else { return }
            // One send: the client reads both at once, and its SETTINGS ACK is the write the PING's ACK rides with.
            peer.send(
                HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: payload).encoded
                    + HTTP2Frame(type: HTTP2Frame.settings, stream: 0).encoded)
            for _ in 0..<2 {
                guard let frame = peer.readFrame(timeout: .seconds(30)) else { return }
                frames.withLock { $0.append(frame) }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        #expect(eventually(timeout: .seconds(30)) { frames.withLock { $0.count == 2 } })
        let got = frames.withLock { $0 }
        #expect(got.map(\.type) == [HTTP2Frame.settings, HTTP2Frame.ping])
        #expect(got.allSatisfy { $0.has(HTTP2Frame.ack) })
        #expect(got.last?.payload == payload)
        #expect(connection.isUsable)
    }

    /// With nothing else to write, the ACK of a server's PING goes by itself once it waited
    /// ``HTTP2Socket/riderDelay``.
    @Test func aServersPingIsAcknowledgedByItselfWhenTheClientWritesNothing() throws {
        let waited = Locked<Duration?>(nil)
        let payload: [UInt8] = [1, 1, 2, 3, 5, 8, 13, 21]
        let server = try HTTP2ScriptedServer { peer in
            guard peer.completeHandshake() else { return }
            let sent = ContinuousClock.now
            peer.send(HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: payload))
            guard let ack = peer.readFrame(timeout: .seconds(30)), ack.type == HTTP2Frame.ping,
                ack.has(HTTP2Frame.ack), ack.payload == payload
            else { return }
            waited.withLock { $0 = sent.duration(to: .now) }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        #expect(eventually(timeout: .seconds(30)) { waited.withLock { $0 } != nil }, "the PING was not acknowledged")
        #expect((waited.withLock { $0 } ?? .zero) >= HTTP2Socket.riderDelay)
        #expect(connection.isUsable)
    }

    /// A flood of PINGs grows no buffer of waiting ACKs: past ``HTTP2Socket/ridersLimit`` bytes they go out
    /// at once, and every PING is acknowledged, in order.
    @Test func aFloodOfPingsIsAcknowledgedInFullAndInOrder() throws {
        let payloads = Locked<[[UInt8]]>([])
        let count = 500
        @Sendable func payload(_ index: Int) -> [UInt8] { [0, 0, 0, 0, 0, 0, UInt8(index >> 8), UInt8(index & 0xFF)] }
        let server = try HTTP2ScriptedServer { peer in
            guard peer.completeHandshake() else { return }
            var flood: [UInt8] = []
            for index in 0..<count {
                flood += HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: payload(index)).encoded
            }
            peer.send(flood)
            while payloads.withLock({ $0.count }) < count, let frame = peer.readFrame(timeout: .seconds(30)) {
                guard frame.type == HTTP2Frame.ping, frame.has(HTTP2Frame.ack) else { continue }
                payloads.withLock { $0.append(frame.payload) }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        #expect(eventually(timeout: .seconds(30)) { payloads.withLock { $0.count } == count })
        let expected = (0..<count).map(payload)
        #expect(payloads.withLock { $0 } == expected)
        #expect(connection.isUsable)
    }

    /// gRPC servers count a PING against their keepalive policy only when they wrote no HEADERS or DATA since
    /// the one before; the connection tells which, and a GOAWAY over pings ('too_many_pings').
    @Test func theConnectionTellsWhetherTheMemberWroteSinceThePingAndAGoAwayOverPings() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            var pings = 0
            while let frame = peer.readFrame(timeout: .seconds(30)) {
                if frame.type == HTTP2Frame.ping, !frame.has(HTTP2Frame.ack) {
                    peer.send(
                        HTTP2Frame(type: HTTP2Frame.ping, flags: HTTP2Frame.ack, stream: 0, payload: frame.payload))
                    pings += 1
                    if pings == 2 {
                        peer.send(
                            HTTP2Multiplexer.goAway(
                                HTTP2ErrorCode.enhanceYourCalm, lastStream: 1, debug: Array("too_many_pings".utf8)))
                    }
                } else if frame.type == HTTP2Frame.data, frame.has(HTTP2Frame.endStream) {
                    peer.sendHeaders(stream: frame.stream, [(":status", "200")])
                    peer.send(
                        HTTP2Frame(
                            type: HTTP2Frame.data, flags: HTTP2Frame.endStream, stream: frame.stream,
                            payload: Array("ok".utf8)))
                }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        #expect(connection.memberWroteSinceLastPing, "nothing was pinged yet")
        try connection.ping(deadline: Self.deadline())
        #expect(!connection.memberWroteSinceLastPing)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try exchange.send(Data("one".utf8), endStream: true, deadline: Self.deadline())
        #expect(
            try exchange.receive(deadline: Self.deadline())
                == .headers([HTTP2Header(":status", "200")], endStream: false))
        #expect(connection.memberWroteSinceLastPing)
        #expect(!connection.wasPingedTooOften)
        try connection.ping(deadline: Self.deadline())
        #expect(eventually { !connection.isUsable })
        #expect(connection.wasPingedTooOften)
    }

    @Test func aPingThatIsNeverAnsweredFailsAtItsDeadline() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            while peer.readFrame(timeout: .seconds(30)) != nil {}
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let failure = Self.failure { () throws(EtcdHTTP.Failure) in try connection.ping(deadline: Self.deadline(0.3)) }
        #expect(failure?.timedOut == true)
        #expect(failure?.text.contains("PING") == true)
    }

    @Test func aFrameLargerThanTheClientAllowsIsAConnectionErrorNamingTheLimit() throws {
        let goAway = Locked<UInt32?>(nil)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            peer.sendHeaders(stream: headers.stream, [(":status", "200")])
            peer.send(
                HTTP2Frame(
                    type: HTTP2Frame.data, stream: headers.stream, payload: [UInt8](repeating: 0x41, count: 20000)))
            if let frame = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.goAway }) {
                goAway.withLock { $0 = HTTP2Frame.read32(frame.payload, at: 4) }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let failure = Self.failureReceiving(exchange)
        #expect(failure?.tooLarge == true)
        #expect(failure?.text.contains("a DATA frame of 20000 bytes") == true, "\(failure?.text ?? "")")
        #expect(failure?.text.contains("16 KiB") == true)
        #expect(!connection.isUsable)
        #expect(eventually(timeout: .seconds(30)) { goAway.withLock { $0 } == HTTP2ErrorCode.frameSizeError })
    }

    @Test func aWindowThatNeverOpensFailsTheSendAtItsDeadline() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings([(4, 0)])  // INITIAL_WINDOW_SIZE 0, and never a WINDOW_UPDATE
            while peer.readFrame(timeout: .seconds(30)) != nil {}
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let started = ContinuousClock.now
        let failure = Self.failure { () throws(EtcdHTTP.Failure) in
            try exchange.send(Data(repeating: 1, count: 100), endStream: true, deadline: .now + .milliseconds(300))
        }
        #expect(failure?.timedOut == true)
        #expect(failure?.text.contains("flow-control window closed: 100 bytes") == true, "\(failure?.text ?? "")")
        #expect(started.duration(to: .now) < .seconds(20))
    }

    @Test func aWindowMadeNegativeBySettingsWaitsForUpdatesBeforeSendingMore() throws {
        let receivedBytes = Locked(0)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings([(4, 10)])
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            // The first 10 bytes arrive; the window then drops to -6 and needs 6 + 20 to send 20 more.
            guard let first = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.data }) else { return }
            receivedBytes.withLock { $0 += first.payload.count }
            peer.sendSettings([(4, 4)])
            peer.send(HTTP2Multiplexer.windowUpdate(stream: headers.stream, 26))
            while let frame = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.data }) {
                receivedBytes.withLock { $0 += frame.payload.count }
                if frame.has(HTTP2Frame.endStream) { break }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try exchange.send(Data(repeating: 1, count: 10), endStream: false, deadline: Self.deadline())
        try exchange.send(Data(repeating: 2, count: 20), endStream: true, deadline: Self.deadline())
        #expect(eventually(timeout: .seconds(30)) { receivedBytes.withLock { $0 } == 30 })
    }

    @Test func endlessContinuationFramesFailOnceTheHeaderBlockPassesTheLimit() throws {
        let sent = Locked(0)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            guard peer.send(HTTP2Frame(type: HTTP2Frame.headers, stream: headers.stream, payload: [0x88])) else {
                return
            }
            // Up to 64 MiB of CONTINUATION: the client must give up long before. (Loopback's socket buffers
            // take several MiB whether the client reads or not: 4 MiB all went out in a loaded CI run.)
            for _ in 0..<4096 {
                guard
                    peer.send(
                        HTTP2Frame(
                            type: HTTP2Frame.continuation, stream: headers.stream,
                            payload: [UInt8](repeating: 0x88, count: 16384)))
                else { break }
                sent.withLock { $0 += 16384 }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let failure = Self.failureReceiving(exchange)
        #expect(failure?.tooLarge == true)
        #expect(failure?.text.contains("a header block larger than 64 KiB") == true, "\(failure?.text ?? "")")
        #expect(server.waitUntilFinished())
        #expect(sent.withLock { $0 } < 64 << 20, "the client read all the CONTINUATION frames")
    }

    @Test func goAwayMidStreamFailsTheStreamsAboveItAsNotProcessedAndLetsTheOthersFinish() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard peer.readRequest(stream: 1), peer.readRequest(stream: 3) else { return }
            peer.send(HTTP2Multiplexer.goAway(HTTP2ErrorCode.noError, lastStream: 1, debug: Array("restarting".utf8)))
            peer.sendHeaders(stream: 1, [(":status", "200")])
            peer.send(
                HTTP2Frame(type: HTTP2Frame.data, flags: HTTP2Frame.endStream, stream: 1, payload: Array("done".utf8)))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let lower = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try lower.send(Data("one".utf8), endStream: true, deadline: Self.deadline())
        let higher = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try higher.send(Data("two".utf8), endStream: true, deadline: Self.deadline())
        let failure = Self.failureReceiving(higher)
        #expect(failure?.notProcessed == true)
        #expect(failure?.text.contains("GOAWAY NO_ERROR, 'restarting'") == true, "\(failure?.text ?? "")")
        #expect(
            try lower.receive(deadline: Self.deadline()) == .headers([HTTP2Header(":status", "200")], endStream: false))
        #expect(try lower.receive(deadline: Self.deadline()) == .data(Array("done".utf8), endStream: true))
        #expect(!connection.isUsable)
        let refused = Self.failure { () throws(EtcdHTTP.Failure) in
            try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        }
        #expect(refused?.notProcessed == true)
    }

    @Test func resetStreamsFailNamingTheirErrorCodeAndRefusedOnesAreSafeToRetry() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard peer.readRequest(stream: 1), peer.readRequest(stream: 3) else { return }
            peer.send(
                HTTP2Frame(
                    type: HTTP2Frame.resetStream, stream: 1,
                    payload: HTTP2Multiplexer.code(HTTP2ErrorCode.refusedStream)))
            peer.sendHeaders(stream: 3, [(":status", "200")])
            peer.send(
                HTTP2Frame(
                    type: HTTP2Frame.resetStream, stream: 3, payload: HTTP2Multiplexer.code(HTTP2ErrorCode.cancel)))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let refused = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try refused.send(Data(), endStream: true, deadline: Self.deadline())
        let cancelled = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try cancelled.send(Data(), endStream: true, deadline: Self.deadline())
        let first = Self.failureReceiving(refused)
        #expect(first?.text.contains("RST_STREAM REFUSED_STREAM") == true)
        #expect(first?.notProcessed == true)
        #expect(
            try cancelled.receive(deadline: Self.deadline())
                == .headers([HTTP2Header(":status", "200")], endStream: false))
        let second = Self.failureReceiving(cancelled)
        #expect(second?.text.contains("RST_STREAM CANCEL") == true)
        #expect(second?.notProcessed == false)
        #expect(connection.isUsable, "a reset stream leaves the connection usable")
    }

    @Test func aServerThatSendsNoSettingsFailsTheOpenAtItsDeadline() throws {
        let server = try HTTP2ScriptedServer { peer in
            _ = peer.readPreface()
            while peer.readFrame(timeout: .seconds(30)) != nil {}
        }
        defer { server.stop() }
        let started = ContinuousClock.now
        let failure = Self.failure { () throws(EtcdHTTP.Failure) in try Self.open(server, seconds: 0.5) }
        #expect(failure?.timedOut == true)
        #expect(failure?.text.contains("sent no HTTP/2 SETTINGS in time") == true, "\(failure?.text ?? "")")
        #expect(started.duration(to: .now) < .seconds(20))
    }

    @Test func anHTTP1AnswerOrAnotherFrameInsteadOfSettingsIsABadPreface() throws {
        let http1 = try HTTP2ScriptedServer { peer in
            _ = peer.readPreface()
            peer.send(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { http1.stop() }
        let first = Self.failure { () throws(EtcdHTTP.Failure) in try Self.open(http1) }
        #expect(first?.malformed == true)
        #expect(first?.text.contains("an HTTP/1 answer ('HTTP/1.1 400 Bad Request") == true, "\(first?.text ?? "")")

        let ping = try HTTP2ScriptedServer { peer in
            _ = peer.readPreface()
            peer.send(HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: [UInt8](repeating: 0, count: 8)))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { ping.stop() }
        let second = Self.failure { () throws(EtcdHTTP.Failure) in try Self.open(ping) }
        #expect(
            second?.text.contains("a PING frame first, expected the server's SETTINGS") == true, "\(second?.text ?? "")"
        )
    }

    @Test func aPushPromiseIsAProtocolError() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard let headers = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.headers }) else { return }
            var payload: [UInt8] = []
            HTTP2Frame.append32(2, to: &payload)
            payload += HTTP2ScriptedServer.Peer.block([(":method", "GET"), (":path", "/pushed")])
            peer.send(
                HTTP2Frame(
                    type: HTTP2Frame.pushPromise, flags: HTTP2Frame.endHeaders, stream: headers.stream, payload: payload
                ))
            _ = peer.next(timeout: .seconds(10)) { $0.type == HTTP2Frame.goAway }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let failure = Self.failureReceiving(exchange)
        #expect(failure?.malformed == true)
        #expect(failure?.text.contains("PUSH_PROMISE") == true, "\(failure?.text ?? "")")
    }

    @Test func theStreamWindowIsGrantedAgainOnlyAsTheCallerTakesTheData() throws {
        let window = HTTP2Multiplexer.streamWindow
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard peer.readRequest(stream: 1) else { return }
            peer.sendHeaders(stream: 1, [(":status", "200")])
            // Exactly one window, then wait for the client to grant more before the last byte.
            let piece = [UInt8](repeating: 7, count: 16384)
            for _ in 0..<(window / piece.count) {
                guard peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: 1, payload: piece)) else { return }
            }
            guard peer.next(timeout: .seconds(60), { $0.type == HTTP2Frame.windowUpdate && $0.stream == 1 }) != nil
            else { return }
            peer.send(HTTP2Frame(type: HTTP2Frame.data, flags: HTTP2Frame.endStream, stream: 1, payload: [9]))
            _ = peer.readFrame(timeout: .seconds(5))
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try exchange.send(Data(), endStream: true, deadline: Self.deadline())
        var total = 0
        var ended = false
        while !ended {
            switch try exchange.receive(deadline: Self.deadline(60)) {
            case .headers: continue
            case .data(let data, let endStream):
                total += data.count
                ended = endStream
            }
        }
        #expect(total == window + 1)
    }

    @Test func dataBeyondTheStreamWindowIsAFlowControlError() throws {
        let goAway = Locked<UInt32?>(nil)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            guard peer.readRequest(stream: 1) else { return }
            peer.sendHeaders(stream: 1, [(":status", "200")])
            let piece = [UInt8](repeating: 7, count: 16384)
            for _ in 0..<(HTTP2Multiplexer.streamWindow / piece.count) {
                guard peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: 1, payload: piece)) else { return }
            }
            peer.send(HTTP2Frame(type: HTTP2Frame.data, stream: 1, payload: [1]))
            if let frame = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.goAway }) {
                goAway.withLock { $0 = HTTP2Frame.read32(frame.payload, at: 4) }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        try exchange.send(Data(), endStream: true, deadline: Self.deadline())
        // The caller takes nothing until the member broke the window: the connection fails.
        #expect(eventually(timeout: .seconds(30)) { !connection.isUsable })
        let failure = Self.failureReceiving(exchange)
        #expect(failure?.malformed == true)
        #expect(failure?.text.contains("when its window had room for 0") == true, "\(failure?.text ?? "")")
        #expect(eventually(timeout: .seconds(30)) { goAway.withLock { $0 } == HTTP2ErrorCode.flowControlError })
    }

    @Test func cancellingAnExchangeWakesAWaitingReceiveAndResetsTheStream() throws {
        let reset = Locked<UInt32?>(nil)
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings()
            if let frame = peer.next(timeout: .seconds(30), { $0.type == HTTP2Frame.resetStream }) {
                reset.withLock { $0 = HTTP2Frame.read32(frame.payload, at: 0) }
            }
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let outcome = Locked<EtcdHTTP.Failure?>(nil)
        let done = Locked(false)
        Thread {
            do throws(EtcdHTTP.Failure) { _ = try exchange.receive(deadline: nil) } catch {
                outcome.withLock { $0 = error }
            }
            done.withLock { $0 = true }
        }.start()
        exchange.cancel()
        #expect(eventually(timeout: .seconds(30)) { done.withLock { $0 } })
        #expect(outcome.withLock { $0?.text } == "the exchange was cancelled")
        #expect(eventually(timeout: .seconds(30)) { reset.withLock { $0 } == HTTP2ErrorCode.cancel })
        #expect(connection.isUsable)
    }

    @Test func theMembersConcurrentStreamLimitMakesAnExchangeWaitUntilItsDeadline() throws {
        let server = try HTTP2ScriptedServer { peer in
            guard peer.readPreface() else { return }
            peer.sendSettings([(3, 1)])
            while peer.readFrame(timeout: .seconds(30)) != nil {}
        }
        defer { server.stop() }
        let connection = try Self.open(server)
        let first = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        let failure = Self.failure { () throws(EtcdHTTP.Failure) in
            try connection.exchange(path: "/p", headers: [], deadline: .now + .milliseconds(300))
        }
        #expect(failure?.timedOut == true)
        #expect(failure?.text.contains("allows 1 concurrent streams") == true, "\(failure?.text ?? "")")
        first.cancel()
        let second = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
        second.cancel()
    }

    /// Random frames after a valid SETTINGS: the client fails the connection or carries on, never traps.
    @Test func randomFramesFromTheServerNeverTrapTheClient() throws {
        var random = SeededGenerator(seed: 9113)
        for round in 0..<12 {
            let seed = random.next()
            let server = try HTTP2ScriptedServer { peer in
                guard peer.readPreface() else { return }
                peer.sendSettings()
                var generator = SeededGenerator(seed: seed)
                _ = peer.next(timeout: .seconds(30)) { $0.type == HTTP2Frame.headers }
                for _ in 0..<200 {
                    let type = UInt8.random(in: 0...10, using: &generator)
                    let length = Int.random(in: 0...40, using: &generator)
                    let frame = HTTP2Frame(
                        type: type, flags: UInt8.random(in: 0...255, using: &generator),
                        stream: UInt32.random(in: 0...5, using: &generator),
                        payload: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                    guard peer.send(frame) else { return }
                }
                _ = peer.readFrame(timeout: .seconds(2))
            }
            defer { server.stop() }
            let connection = try Self.open(server)
            let exchange = try connection.exchange(path: "/p", headers: [], deadline: Self.deadline())
            var outcomes = 0
            for _ in 0..<400 {
                do {
                    _ = try exchange.receive(deadline: Self.deadline(10))
                    outcomes += 1
                } catch {
                    #expect(!error.text.isEmpty, "round \(round)")
                    outcomes += 1
                    break
                }
            }
            #expect(outcomes > 0)
        }
    }

    /// The frame reader on random bytes: frames or an error, never a trap, and never more buffered than one
    /// frame and one read.
    @Test func theFrameReaderOnRandomBytesNeverTrapsAndStaysBounded() {
        var random = SeededGenerator(seed: 16384)
        var frames = 0
        var errors = 0
        for _ in 0..<2000 {
            var reader = HTTP2FrameReader()
            for _ in 0..<8 {
                let chunk = (0..<Int.random(in: 0...4096, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                reader.append(chunk)
                do {
                    while let frame = try reader.next() {
                        frames += 1
                        #expect(frame.payload.count <= HTTP2Frame.defaultMaximumSize)
                        _ = try? frame.unpadded()
                    }
                } catch {
                    errors += 1
                    break
                }
                #expect(reader.bufferedCount <= HTTP2Frame.headerSize + HTTP2Frame.defaultMaximumSize + 4096)
            }
        }
        #expect(errors > 0)
        _ = frames
    }
}

extension HTTP2Received {
    /// Whether this is a head (a header block that does not end the stream).
    fileprivate var isHead: Bool {
        if case .headers(_, endStream: false) = self { return true }
        return false
    }
}
