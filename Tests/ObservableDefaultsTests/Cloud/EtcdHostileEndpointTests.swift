import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The etcd client against a member that misbehaves on purpose (``HostileEndpoint``): broken numbers are
/// errors, not crashes; oversize answers and watch messages are cut off at the client's limits; a member
/// that trickles its answer is given up on within the request's timeout; a watch whose events go back in
/// revision order is ended and the namespace read again. Every error names the endpoint.
///
/// (These tests use only what the client had before these checks, so they also run against the old code,
/// where they fail: a negative length stopped the test process with SIGILL.)
@Suite struct EtcdHostileEndpointTests {
    let directory = TemporaryDirectory()

    /// The most bytes a hostile endpoint may get into its socket beyond the client's limit before the client
    /// hangs up: what the kernel buffers on a loopback connection (measured: 65–640 KB; the endpoint's send
    /// buffer is small, the client's receive buffer may grow). An unbounded client reads all the endpoint
    /// sends (128 MiB, or 100 MB).
    static let inFlight = 8 << 20
    static let limit = 8 << 20

    /// A client of `endpoints`, each request bounded by `timeout` seconds.
    private func client(_ endpoints: [URL], timeout: TimeInterval = 2) -> EtcdClient {
        EtcdClient(
            configuration: EtcdConfiguration(
                endpoints: endpoints, namespace: "hostile", stateDirectory: directory.url, requestTimeout: timeout
            ).overGateway)
    }

    // MARK: Numbers off the wire (defect 1)

    /// A scripted answer that breaks HTTP's rules, and what the error must say about it.
    struct BrokenAnswer: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: Data
        let expected: String
        init(_ name: String, _ text: String, _ expected: String) {
            self.name = name
            bytes = Data(text.utf8)
            self.expected = expected
        }
        var testDescription: String { name }
    }

    static let brokenAnswers: [BrokenAnswer] = [
        BrokenAnswer(
            "a negative Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}",
            "sent a malformed answer: a Content-Length of '-1', expected a decimal number of bytes"),
        BrokenAnswer(
            "a negative chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nabc\r\n0\r\n\r\n",
            "sent a malformed answer: a chunk size of '-5', expected hexadecimal digits"),
        BrokenAnswer(
            "a Content-Length with a sign", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
            "a Content-Length of '+2'"),
        BrokenAnswer(
            "a Content-Length past Int", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
            "a Content-Length of '99999999999999999999', expected a decimal number of bytes"),
        BrokenAnswer(
            "a Content-Length with letters", "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n{}",
            "a Content-Length of '2x'"),
        BrokenAnswer(
            "two Content-Lengths that disagree", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 7\r\n\r\n{}",
            "two Content-Length headers, 2 and 7, expected one"),
        BrokenAnswer(
            "both a length and chunks",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            "both Transfer-Encoding: chunked and Content-Length: 2, expected one of them"),
        BrokenAnswer(
            "garbage after a chunk size",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 xyz\r\n{}\r\n0\r\n\r\n",
            "a chunk size of '2 xyz', expected hexadecimal digits"),
        BrokenAnswer(
            "a control character in a chunk extension",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;\u{1}\r\n{}\r\n0\r\n\r\n",
            #"a chunk size of '2;\x01', expected hexadecimal digits"#),
        BrokenAnswer(
            "a chunk size written 0x2", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
            "a chunk size of '0x2'"),
        BrokenAnswer(
            "a chunk longer than its size",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}}}\r\n0\r\n\r\n",
            "a chunk of 2 bytes followed by more data, expected a line end after it"),
        BrokenAnswer(
            "a negative status", "HTTP/1.1 -200 OK\r\nContent-Length: 2\r\n\r\n{}",
            "the status line 'HTTP/1.1 -200 OK', expected HTTP/1.x and a three-digit status from 100 to 599"),
        BrokenAnswer(
            "a status past Int", "HTTP/1.1 99999999999999999999 OK\r\nContent-Length: 2\r\n\r\n{}",
            "the status line 'HTTP/1.1 99999999999999999999 OK'"),
        BrokenAnswer(
            "garbage instead of an answer", "\u{0}\u{7F}garbage\r\n\r\n", #"the status line '\x00\x7Fgarbage'"#),
        BrokenAnswer(
            "the largest Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n{}",
            "sent an answer larger than 8 MiB (Content-Length: 9223372036854775807); the client reads answers of up to 8 MiB"
        ),
        BrokenAnswer(
            "the largest chunk size",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n{}\r\n0\r\n\r\n",
            "sent a chunk larger than 8 MiB (its size line says 9223372036854775807 bytes)")
    ]

    /// Each broken number is an error naming the endpoint and what it sent — no trap (a negative length
    /// was a `Range` with its bounds reversed: SIGILL, the whole process gone) — and the connection is
    /// closed, never used for another request.
    @Test(arguments: brokenAnswers)
    func aBrokenAnswerIsAnErrorNamingTheEndpoint(_ answer: BrokenAnswer) throws {
        let endpoint = try HostileEndpoint { _ in [.send(answer.bytes)] }
        defer { endpoint.stop() }
        let client = client([endpoint.url])
        let error = #expect(throws: DefaultsError.self) { try client.status() }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("etcd member \(endpoint.url.absoluteString) sent "), "\(message)")
        #expect(message.contains(answer.expected), "\(message)")
        #expect(eventually { endpoint.finishedConnections == 1 }, "the client closed the connection")
        #expect(endpoint.laterRequestCount == 0)
    }

    // MARK: Oversize answers (defect 2)

    /// A scripted answer larger than the client reads, and what the error must say.
    struct OversizeAnswer: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [HostileEndpoint.Step]
        /// How many bytes the endpoint would send to a client that reads everything.
        let total: Int
        let expected: String
        var testDescription: String { name }
    }

    static let filler = Data(repeating: UInt8(ascii: "a"), count: 64 << 10)

    static let oversizeAnswers: [OversizeAnswer] = [
        OversizeAnswer(
            name: "a 100 MB body by Content-Length",
            steps: [.send(HostileAnswer.head(["Content-Length: 104857600"])), .repeating(filler, total: 104_857_600)],
            total: 104_857_600, expected: "sent an answer larger than 8 MiB (Content-Length: 104857600)"),
        OversizeAnswer(
            name: "an endless chunk",
            steps: [
                .send(HostileAnswer.head(["Transfer-Encoding: chunked"]) + Data("7fffffffffffffff\r\n".utf8)),
                .repeating(filler, total: 128 << 20)
            ],
            total: 128 << 20, expected: "sent a chunk larger than 8 MiB (its size line says 9223372036854775807 bytes)"),
        OversizeAnswer(
            name: "endless chunks of 1 MiB",
            steps: [
                .send(HostileAnswer.head(["Transfer-Encoding: chunked"])),
                .repeating(HostileAnswer.chunk(Data(repeating: 0x61, count: 1 << 20)), total: 128 << 20)
            ],
            total: 128 << 20, expected: "sent an answer larger than 8 MiB (chunked, more than 8388608 bytes so far)"),
        OversizeAnswer(
            name: "an endless body without a length",
            steps: [.send(HostileAnswer.head([])), .repeating(filler, total: 128 << 20)],
            total: 128 << 20,
            expected: "sent an answer larger than 8 MiB (no length given, more than 8388608 bytes so far)"),
        OversizeAnswer(
            name: "an endless header line",
            steps: [.send(Data("HTTP/1.1 200 OK\r\nX-Filler: ".utf8)), .repeating(filler, total: 128 << 20)],
            total: 128 << 20, expected: "sent a header line larger than 16 KiB (it begins 'X-Filler: aaaa"),
        OversizeAnswer(
            name: "an endless status line",
            steps: [.send(Data("HTTP/1.1 200 ".utf8)), .repeating(filler, total: 128 << 20)],
            total: 128 << 20, expected: "sent a header line larger than 16 KiB (it begins 'HTTP/1.1 200 aaaa"),
        OversizeAnswer(
            name: "endless headers",
            steps: [
                .send(Data("HTTP/1.1 200 OK\r\n".utf8)),
                .repeating(Data(String(repeating: "X-Filler: a\r\n", count: 4096).utf8), total: 128 << 20)
            ],
            total: 128 << 20, expected: "sent an answer head larger than 64 KiB"),
        OversizeAnswer(
            name: "endless trailers",
            steps: [
                .send(HostileAnswer.head(["Transfer-Encoding: chunked"]) + Data("0\r\n".utf8)),
                .repeating(Data(String(repeating: "X-Trailer: a\r\n", count: 4096).utf8), total: 128 << 20)
            ],
            total: 128 << 20, expected: "sent trailers larger than 64 KiB")
    ]

    /// An answer past a limit is an error naming the endpoint and the limit, found as the bytes arrive:
    /// the client hangs up after about the limit (plus what the kernel buffers), not after everything.
    @Test(arguments: oversizeAnswers)
    func anOversizeAnswerIsCutOffAtTheLimit(_ answer: OversizeAnswer) throws {
        let endpoint = try HostileEndpoint { _ in answer.steps }
        defer { endpoint.stop() }
        let client = client([endpoint.url], timeout: 20)
        let error = #expect(throws: DefaultsError.self) { try client.status() }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("etcd member \(endpoint.url.absoluteString) sent "), "\(message)")
        #expect(message.contains(answer.expected), "\(message)")
        #expect(eventually { endpoint.finishedConnections == 1 })
        #expect(endpoint.hangUpCount == 1, "the client hung up before the endpoint sent all \(answer.total) bytes")
        #expect(endpoint.bytesSent < Self.limit + Self.inFlight, "the endpoint got \(endpoint.bytesSent) bytes out")
    }

    /// A member whose answer is too large is passed over like an unreachable one: the store writes through
    /// the next member and reports the first on its error channel.
    @Test(EtcdCluster.required) func aStoreMovesOnFromAMemberWithAnOversizeAnswer() throws {
        let etcd = try EtcdCluster.sharedNode()
        let oversize = try HostileEndpoint { _ in Self.oversizeAnswers[0].steps }
        defer { oversize.stop() }
        let namespace = freshNamespace()
        let errors = ErrorRecorder()
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: [oversize.url, etcd.endpoints[0]], namespace: namespace, stateDirectory: directory.url,
                requestTimeout: 2
            ).overGateway)
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        store.set(1, forKey: "k")
        #expect(eventually(timeout: .seconds(20)) { !store.hasPendingChanges })
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "1")
        #expect(
            errors.waitFor(
                "etcd member \(oversize.url.absoluteString) sent an answer larger than 8 MiB (Content-Length: 104857600)"
            ))
        // The endpoint's sending thread finds the hang-up at its next send: after the store moved on, maybe.
        #expect(eventually { oversize.hangUpCount >= 1 })
        #expect(oversize.bytesSent < Self.limit + Self.inFlight, "the endpoint got \(oversize.bytesSent) bytes out")
    }

    // MARK: Trickling members (defect 3)

    /// An answer sent one byte every half second: each read gets something, so a timeout per read never
    /// fires (it took about 70 s, or forever with a longer body). A request that gives up before all of it
    /// arrived has a deadline of its own.
    static let trickle: [HostileEndpoint.Step] = [.trickle(trickledAnswer, interval: 0.5)]
    static let trickledAnswer = Data(
        ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n"
            + String(repeating: " ", count: 58) + "{}").utf8)

    @Test func aTricklingMemberFailsTheRequestWithinItsTimeout() throws {
        let trickler = try HostileEndpoint() { _ in Self.trickle }
        defer { trickler.stop() }
        let outcome = EtcdHTTP.post(
            url: trickler.url.appendingPathComponent("/v3/maintenance/status"), body: Data("{}".utf8), headers: [:],
            timeout: 1,
            transport: EtcdTransport())
        let sent = trickler.bytesSent
        guard case .unreachable(let why, let refused, let rejected) = outcome else {
            Issue.record("the trickled answer was taken: \(outcome)")
            return
        }
        #expect(why.hasPrefix("did not answer within 1 s: only "), "\(why)")
        #expect(why.contains("bytes of the answer arrived in that time (the member stalls or trickles)"), "\(why)")
        #expect(!refused && !rejected, "not a definite no: the member may recover")
        #expect(
            sent >= 1 && sent < Self.trickledAnswer.count, "gave up after \(sent) of \(Self.trickledAnswer.count) bytes"
        )
    }

    /// The status probe (which finds a hung watched member) is bounded the same way.
    @Test func theStatusProbeOfATricklingMemberFailsWithinItsTimeout() throws {
        let trickler = try HostileEndpoint() { _ in Self.trickle }
        defer { trickler.stop() }
        #expect(!client([trickler.url]).isResponsive(trickler.url, timeout: 1))
        let sent = trickler.bytesSent
        #expect(
            sent < Self.trickledAnswer.count,
            "the probe gave up only after \(sent) of \(Self.trickledAnswer.count) bytes")
    }

    /// A store whose first member trickles writes through the next one within about the request timeout,
    /// and says why on its error channel (before, it waited as long as the trickle went on, silently).
    @Test(EtcdCluster.required) func aStoreMovesOnFromATricklingMemberWithinTheTimeout() throws {
        let etcd = try EtcdCluster.sharedNode()
        let trickler = try HostileEndpoint() { _ in Self.trickle }
        defer { trickler.stop() }
        let namespace = freshNamespace()
        let errors = ErrorRecorder()
        let started = ContinuousClock.now
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: [trickler.url, etcd.endpoints[0]], namespace: namespace, stateDirectory: directory.url,
                requestTimeout: 2
            ).overGateway)
        let observation = store.observeErrors { errors.record($0) }  // the first report comes after 2 s at the soonest
        defer { observation.cancel() }
        store.set(1, forKey: "k")
        // One request waits out the 2 s timeout on the trickler, then the rest go to the real member: written
        // long before the trickled answer (70 s) could be complete.
        #expect(eventually(timeout: .seconds(30)) { !store.hasPendingChanges }, "not written while the trickle went on")
        print(
            "trickling first member: the write reached etcd \(ContinuousClock.now - started) after the store started (request timeout 2 s)"
        )
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "1")
        #expect(
            errors.waitFor("etcd member \(trickler.url.absoluteString) did not answer within 2 s: only "),
            "\(errors.errors.map(\.description))")
    }

    /// The head of a watch answer must arrive within a deadline too (its body may then stay quiet).
    @Test func aWatchWhoseHeadTricklesEndsWithinItsDeadline() throws {
        let trickler = try HostileEndpoint() { _ in Self.trickle }
        defer { trickler.stop() }
        let ends = Locked<[String]>([])
        let watch = EtcdWatchStream(
            endpoint: trickler.url, wire: EtcdGatewayWire(transport: EtcdTransport()), prefix: "ns/", startRevision: 1,
            token: nil,
            cluster: EtcdClusterCheck(),
            onEvents: { _, _ in }, onEnd: { end in ends.withLock { $0.append(String(describing: end)) } })
        watch.start()
        defer { watch.cancel() }
        // Long before the trickled head (70 s) could be complete.
        #expect(
            eventually(timeout: .seconds(30)) { !ends.withLock { $0 }.isEmpty }, "the watch still waits for its head")
        let end = ends.withLock { $0 }.first ?? ""
        #expect(
            end.contains("the watch on etcd member \(trickler.url.absoluteString) ended: no answer within 3 s"),
            "\(end)")
    }

    // MARK: Watch streams (defects 2 and 7)

    /// A watch message larger than the limit (no newline within 8 MiB) ends the watch with an error naming
    /// the endpoint; the client hangs up instead of keeping what arrives (100 MB took 200 MB).
    @Test func anOversizeWatchMessageEndsTheWatch() throws {
        let endpoint = try HostileEndpoint { _ in
            [
                .send(HostileAnswer.watchHead + HostileAnswer.watchMessage(clusterID: "1", revision: 1, created: true)),
                .repeating(HostileAnswer.chunk(Self.filler), total: 128 << 20)
            ]
        }
        defer { endpoint.stop() }
        let ends = Locked<[String]>([])
        let watch = EtcdWatchStream(
            endpoint: endpoint.url, wire: EtcdGatewayWire(transport: EtcdTransport()), prefix: "ns/", startRevision: 1,
            token: nil,
            cluster: EtcdClusterCheck(),
            onEvents: { _, _ in }, onEnd: { end in ends.withLock { $0.append(String(describing: end)) } })
        watch.start()
        defer { watch.cancel() }
        #expect(eventually(timeout: .seconds(20)) { !ends.withLock { $0 }.isEmpty })
        let end = ends.withLock { $0 }.first ?? ""
        #expect(
            end.contains("etcd member \(endpoint.url.absoluteString) sent a watch message larger than 8 MiB"), "\(end)")
        #expect(eventually { endpoint.finishedConnections == 1 })
        #expect(endpoint.hangUpCount == 1, "the client hung up before the endpoint sent its 128 MiB")
        #expect(endpoint.bytesSent < Self.limit + Self.inFlight, "the endpoint got \(endpoint.bytesSent) bytes out")
    }

    /// The events of a watch as a ``HostileEndpoint`` serves them: `messages` after the created one, each a
    /// list of `(key, value, revision)`; the stream then stays open and quiet.
    private func watch(
        messages: [[(key: String, value: String?, revision: Int64)]], startRevision: Int64
    ) throws -> (endpoint: HostileEndpoint, events: Locked<[Int64]>, ends: Locked<[String]>, stream: EtcdWatchStream) {
        let endpoint = try HostileEndpoint { _ in
            var data =
                HostileAnswer.watchHead
                + HostileAnswer.watchMessage(clusterID: "1", revision: startRevision, created: true)
            for events in messages { data += HostileAnswer.watchMessage(clusterID: "1", revision: 100, events: events) }
            return [.send(data), .waitForRelease]
        }
        let events = Locked<[Int64]>([])
        let ends = Locked<[String]>([])
        let stream = EtcdWatchStream(
            endpoint: endpoint.url, wire: EtcdGatewayWire(transport: EtcdTransport()), prefix: "ns/",
            startRevision: startRevision,
            token: nil,
            cluster: EtcdClusterCheck(),
            onEvents: { _, pairs in events.withLock { $0 += pairs.map(\.0.modRevision) } },
            onEnd: { end in ends.withLock { $0.append(String(describing: end)) } })
        stream.start()
        return (endpoint, events, ends, stream)
    }

    @Test func watchEventsGoingBackInRevisionEndTheWatchAsAProtocolViolation() throws {
        let (endpoint, events, ends, stream) = try watch(
            messages: [[("ns/a", "1", 10)], [("ns/b", "2", 7)], [("ns/c", "3", 11)]], startRevision: 5)
        defer { stream.cancel(); endpoint.stop() }
        #expect(eventually { !ends.withLock { $0 }.isEmpty }, "the watch went on")
        let end = ends.withLock { $0 }.first ?? ""
        #expect(end.hasPrefix("protocolViolation"), "\(end)")
        #expect(
            end.contains(
                "etcd member \(endpoint.url.absoluteString) sent watch events out of order: an event at revision 7 after one at revision 10"
            ), "\(end)")
        #expect(events.withLock { $0 } == [10], "nothing from the message that went back, or after it")
    }

    @Test func aWatchEventOlderThanTheStartRevisionEndsTheWatch() throws {
        let (endpoint, events, ends, stream) = try watch(
            messages: [[("ns/a", "1", 6), ("ns/b", "2", 3)]], startRevision: 5)
        defer { stream.cancel(); endpoint.stop() }
        #expect(eventually { !ends.withLock { $0 }.isEmpty }, "the watch went on")
        let end = ends.withLock { $0 }.first ?? ""
        #expect(end.contains("an event at revision 3 after one at revision 6"), "\(end)")
        #expect(events.withLock { $0 }.isEmpty, "no event of the message is delivered")

        let (early, earlyEvents, earlyEnds, earlyStream) = try watch(messages: [[("ns/a", "1", 4)]], startRevision: 5)
        defer { earlyStream.cancel(); early.stop() }
        #expect(eventually { !earlyEnds.withLock { $0 }.isEmpty }, "the watch went on")
        let earlyEnd = earlyEnds.withLock { $0 }.first ?? ""
        #expect(
            earlyEnd.contains("an event at revision 4, older than revision 5 the watch started from"), "\(earlyEnd)")
        #expect(earlyEvents.withLock { $0 }.isEmpty)
    }

    /// Events at one revision (a transaction's) and revisions that skip are in order.
    @Test func eventsOfOneRevisionAndGapsAreInOrder() throws {
        let (endpoint, events, ends, stream) = try watch(
            messages: [[("ns/a", "1", 5), ("ns/b", "2", 5)], [("ns/c", "3", 9)], [("ns/d", nil, 9), ("ns/e", "4", 12)]],
            startRevision: 5)
        defer { stream.cancel(); endpoint.stop() }
        #expect(eventually { events.withLock { $0 }.count == 5 })
        #expect(events.withLock { $0 } == [5, 5, 9, 9, 12])
        #expect(ends.withLock { $0 }.isEmpty, "\(ends.withLock { $0 })")
    }

    /// A store whose watch goes back in revision order reports it and reads the namespace again, so it
    /// learns what the broken watch never said (before, the late event was dropped without a word).
    @Test(EtcdCluster.required) func aStoreWhoseWatchGoesBackReportsItAndReadsTheNamespaceAgain() throws {
        let etcd = try EtcdCluster.sharedNode()
        let member = etcd.endpoints[0]
        let status = try #require(try synchronousPost(member, "/v3/maintenance/status", "{}"))
        let clusterID = try #require(
            status.split(separator: "\"cluster_id\":\"").dropFirst().first?.split(separator: "\"").first.map {
                String($0)
            })
        let namespace = freshNamespace()
        // Requests go on to the real member; the first watch is scripted, later ones stay quiet.
        let firstWatch = Locked(true)
        let endpoint = try HostileEndpoint { request in
            guard request.path == "/v3/watch" else { return [.forward(to: member)] }
            let start =
                Int64(
                    request.body.split(separator: "\"start_revision\":\"").dropFirst().first?.split(separator: "\"")
                        .first ?? "") ?? 1
            let created =
                HostileAnswer.watchHead
                + HostileAnswer.watchMessage(clusterID: clusterID, revision: start, created: true)
            guard
                firstWatch.withLock({ first in
                    defer { first = false }; return first
                })
            else { return [.send(created), .waitForRelease] }
            return [
                .send(created), .waitForRelease,
                .send(
                    HostileAnswer.watchMessage(
                        clusterID: clusterID, revision: start + 5, events: [("\(namespace)/a", #""first""#, start + 5)])
                        + HostileAnswer.watchMessage(
                            clusterID: clusterID, revision: start + 5,
                            events: [("\(namespace)/b", #""late""#, start + 3)])),
                .waitForRelease
            ]
        }
        defer { endpoint.stop() }
        let errors = ErrorRecorder()
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: [endpoint.url], namespace: namespace, stateDirectory: directory.url, requestTimeout: 2,
                probeInterval: 0.5
            ).overGateway)
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 10))
        #expect(eventually { endpoint.receivedRequests.contains { $0.path == "/v3/watch" } })
        #expect(try rawEtcdPut(member, namespace, "missed", "1"))  // only a read of the namespace finds it
        endpoint.release()
        #expect(
            errors.waitFor(
                "etcd member \(endpoint.url.absoluteString) sent watch events out of order: an event at revision"))
        #expect(
            eventually(timeout: .seconds(10)) { store.longLong(forKey: "missed") == 1 },
            "the namespace was not read again")
        #expect(store.string(forKey: "b") == nil, "the event that went back is not applied")
    }
}
