import Dispatch
import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// The shared Watch stream's rules, against a scripted server (the test plays etcd: it reads what the client
/// sent and answers as it likes, in any order): creates one at a time, answers bound by the ID they name, a
/// watch that left before its answer has its ID cancelled, refusals, hand-over on the reading thread only for
/// a watch alone on the stream, a watch that falls behind, and the stream's end reaching every watch.
@Suite struct EtcdGRPCWatchChannelScriptTests {
    /// A connection that opens one scripted Watch exchange.
    final class ScriptedCarrier: EtcdWatchCarrier {
        private let exchanges = Mutex<[GRPCTestExchange]>([])
        private let reads = Mutex(0)

        var readCount: Int { reads.withLock { $0 } }
        func heardFrom(since reads: Int) -> Bool { readCount > reads }

        func exchange(path: String, headers: [HTTP2Header], deadline: ContinuousClock.Instant?)
            throws(EtcdHTTP.Failure) -> any HTTP2Exchange
        {
            let exchange = GRPCTestExchange([GRPCScript.head])
            exchanges.withLock { $0.append(exchange) }
            return exchange
        }

        /// The last stream opened; `opened`: how many were.
        var exchange: GRPCTestExchange { exchanges.withLock { $0.last! } }
        var opened: Int { exchanges.withLock { $0.count } }

        /// The server sends `response`.
        func answer(_ response: EtcdProto.WatchResponse) {
            reads.withLock { $0 += 1 }
            exchange.deliver(GRPCScript.data(GRPCScript.frame(response.encoded())))
        }

        /// Every request the client sent so far, in order.
        var requests: [EtcdProto.WatchRequest.Request] {
            var bytes = [UInt8](exchange.sent.data)[...]
            var requests: [EtcdProto.WatchRequest.Request] = []
            while bytes.count >= 5 {
                let length = bytes.dropFirst().prefix(4).reduce(0) { $0 << 8 | Int($1) }
                let message = Array(bytes.dropFirst(5).prefix(length))
                bytes = bytes.dropFirst(5 + length)
                if let request = try? EtcdProto.WatchRequest(decoding: message).request { requests.append(request) }
            }
            return requests
        }

        var creates: Int { requests.filter { if case .create = $0 { true } else { false } }.count }
        var cancels: [Int64] {
            requests.compactMap { if case .cancel(let cancel) = $0 { cancel.watchID } else { nil } }
        }
    }

    /// One watch run on a thread of its own, recording what it receives and on which thread.
    final class ScriptedWatch: Sendable {
        let key: String
        private let received = Mutex<[EtcdProto.WatchResponse]>([])
        private let receivingThreads = Mutex<Set<ObjectIdentifier>>([])
        private let ownThread = Mutex<ObjectIdentifier?>(nil)
        private let ended = Mutex<String?>(nil)
        private let abort = Mutex<(@Sendable () -> Void)?>(nil)
        /// While set, receiving waits on it (an observer that blocks).
        private let gate = Mutex<DispatchSemaphore?>(nil)

        init(_ key: String, on channel: EtcdGRPCWatchChannel) {
            self.key = key
            let thread = Thread { [self] in
                ownThread.withLock { $0 = ObjectIdentifier(Thread.current) }
                let outcome = channel.watch(
                    EtcdProto.WatchCreateRequest(key: Array(key.utf8)), headTimeout: 30,
                    register: { abort in self.abort.withLock { $0 = abort } },
                    receive: { response in
                        _ = self.receivingThreads.withLock { $0.insert(ObjectIdentifier(Thread.current)) }
                        self.received.withLock { $0.append(response) }
                        if let gate = self.gate.withLock({ $0 }) { gate.wait() }
                        return !response.canceled
                    })
                let text =
                    switch outcome {
                    case .stopped: "stopped"
                    case .closed: "closed"
                    case .fellBehind: "fell behind"
                    case .failed(let failure): "failed: \(failure)"
                    }
                ended.withLock { $0 = text }
            }
            thread.start()
        }

        var responses: [EtcdProto.WatchResponse] { received.withLock { $0 } }
        var eventKeys: [String] {
            responses.flatMap { $0.events.map { String(decoding: $0.kv?.key ?? [], as: UTF8.self) } }
        }
        var outcome: String? { ended.withLock { $0 } }
        /// Whether every answer was handed over on the watch's own thread (false: on another, the reader).
        var receivedOnItsOwnThread: Bool {
            let own = ownThread.withLock { $0 }
            return receivingThreads.withLock { $0 } == Set([own].compactMap { $0 })
        }

        func stop() { abort.withLock { $0 }?() }

        /// From now on, receiving blocks (an observer that blocks) until ``unblock()``.
        func block() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }

        /// Lets a blocked receive return; receiving no longer blocks.
        func unblock() {
            let gate = gate.withLock { gate in
                defer { gate = nil }
                return gate
            }
            gate?.signal()
        }
    }

    static func created(_ id: Int64) -> EtcdProto.WatchResponse {
        var response = EtcdProto.WatchResponse()
        response.created = true
        response.watchID = id
        return response
    }

    static func event(_ id: Int64, _ key: String, bytes: Int = 1) -> EtcdProto.WatchResponse {
        var response = EtcdProto.WatchResponse()
        response.watchID = id
        response.events = [
            EtcdProto.Event(.put, EtcdProto.KeyValue(key: Array(key.utf8), value: Array(repeating: 0x61, count: bytes)))
        ]
        return response
    }

    static let key = EtcdGRPCWatchChannels.Key(
        endpoint: URL(string: "http://127.0.0.1:1")!, token: nil, answerBytes: 1 << 23)

    /// A channel on a scripted connection, with `count` places taken on it (a watch needs one).
    static func channel(places count: Int, handOverPatience: Duration = .milliseconds(500))
        -> (EtcdGRPCWatchChannels, EtcdGRPCWatchChannel, ScriptedCarrier)
    {
        let channels = EtcdGRPCWatchChannels(handOverPatience: handOverPatience)
        let carrier = ScriptedCarrier()
        let (channel, opens) = channels.join(key, on: carrier)
        #expect(opens)
        for _ in 1..<count {
            let (again, opensAgain) = channels.join(key, on: carrier)
            #expect(again === channel && !opensAgain)
        }
        channel.open(token: nil, limits: .standard)
        return (channels, channel, carrier)
    }

    @Test func createsGoOneAtATimeAndEachAnswerGoesToTheWatchItsIDNames() {
        let (channels, channel, server) = Self.channel(places: 3)
        defer { withExtendedLifetime(channels) {} }
        let a = ScriptedWatch("a", on: channel)
        #expect(eventually { server.creates == 1 })
        let b = ScriptedWatch("b", on: channel), c = ScriptedWatch("c", on: channel)
        #expect(!eventually(timeout: .milliseconds(300)) { server.creates > 1 }, "a create went before an answer")
        // IDs in no particular order, as a proxy may give them.
        server.answer(Self.created(7))
        #expect(eventually { server.creates == 2 })
        #expect(!eventually(timeout: .milliseconds(200)) { server.creates > 2 })
        server.answer(Self.created(3))
        #expect(eventually { server.creates == 3 })
        server.answer(Self.created(5))
        // Which watch sent which create: the keys in the order they went out are the order the IDs name.
        let order = server.requests.compactMap { if case .create(let create) = $0 { create.key } else { nil } }
        let byID: [Int64: String] = Dictionary(
            uniqueKeysWithValues: zip([7, 3, 5], order.map { String(decoding: $0, as: UTF8.self) }))
        let sent: [Int64] = [3, 5, 7, 3]
        for id in sent { server.answer(Self.event(id, byID[id]!)) }
        for watch in [a, b, c] {
            let expected = Array(repeating: watch.key, count: sent.filter { byID[$0] == watch.key }.count)
            #expect(eventually { watch.eventKeys == expected }, "\(watch.key): \(watch.eventKeys)")
            #expect(watch.receivedOnItsOwnThread, "with others on the stream, a watch takes its answers itself")
        }
        // A watch that goes cancels its ID; the stream stays for the others; the last resets it.
        let idOfB = byID.first { $0.value == "b" }!.key
        b.stop()
        #expect(eventually { b.outcome == "stopped" && server.cancels == [idOfB] }, "\(server.cancels)")
        #expect(!server.exchange.cancelled)
        a.stop()
        #expect(eventually { a.outcome == "stopped" && server.cancels.count == 2 }, "\(server.cancels)")
        c.stop()
        #expect(eventually { c.outcome == "stopped" && server.exchange.cancelled })
        #expect(server.cancels.count == 2, "the last watch resets the stream instead of cancelling")
    }

    @Test func aWatchThatLeftBeforeItsAnswerHasItsIDCancelledByTheNextToSend() {
        let (channels, channel, server) = Self.channel(places: 2)
        defer { withExtendedLifetime(channels) {} }
        let gone = ScriptedWatch("gone", on: channel)
        #expect(eventually { server.creates == 1 })
        gone.stop()
        #expect(eventually { gone.outcome == "stopped" })
        let next = ScriptedWatch("next", on: channel)
        #expect(
            !eventually(timeout: .milliseconds(300)) { server.creates > 1 }, "the next create went before the answer")
        server.answer(Self.created(4))  // the answer to the watch that left
        #expect(eventually { server.creates == 2 })
        #expect(server.cancels == [4], "\(server.requests)")
        server.answer(Self.created(5))
        server.answer(Self.event(4, "gone"))
        server.answer(Self.event(5, "next"))
        #expect(eventually { next.eventKeys == ["next"] }, "\(next.eventKeys)")
        #expect(gone.responses.isEmpty)
        next.stop()
        #expect(eventually { server.exchange.cancelled })
    }

    @Test func aRefusedCreateEndsThatWatchWithTheMembersReasonAndTheNextGoesOn() {
        let (channels, channel, server) = Self.channel(places: 3)
        defer { withExtendedLifetime(channels) {} }
        let refused = ScriptedWatch("refused", on: channel)
        #expect(eventually { server.creates == 1 })
        let odd = ScriptedWatch("odd", on: channel)
        var refusal = Self.created(-1)
        refusal.canceled = true
        refusal.cancelReason = "etcdserver: permission denied"
        server.answer(refusal)
        #expect(eventually { refused.outcome == "stopped" })
        #expect(refused.responses.map(\.cancelReason) == ["etcdserver: permission denied"])
        // An answer that makes no watch without saying it cancelled: the watch ends all the same.
        #expect(eventually { server.creates == 2 })
        server.answer(Self.created(-1))
        #expect(eventually { odd.outcome == "stopped" })
        #expect(odd.responses.map(\.cancelReason) == ["the member created no watch (watch ID -1)"])
        let next = ScriptedWatch("next", on: channel)
        #expect(eventually { server.creates == 3 })
        server.answer(Self.created(0))  // etcd's first ID: 0, left out on the wire
        server.answer(Self.event(0, "next"))
        #expect(eventually { next.eventKeys == ["next"] })
        #expect(server.cancels.isEmpty)
        next.stop()
        #expect(eventually { server.exchange.cancelled })
    }

    @Test func aWatchAloneOnTheStreamIsHandedItsAnswersByTheReadingThread() {
        let (channels, channel, server) = Self.channel(places: 1)
        defer { withExtendedLifetime(channels) {} }
        let alone = ScriptedWatch("alone", on: channel)
        #expect(eventually { server.creates == 1 })
        server.answer(Self.created(1))
        server.answer(Self.event(1, "alone"))
        #expect(eventually { alone.eventKeys == ["alone"] })
        #expect(!alone.receivedOnItsOwnThread, "no hop to the watch's thread while it is alone")
        alone.stop()
        #expect(eventually { alone.outcome == "stopped" && server.exchange.cancelled })
    }

    /// The first watch on `channel`, created as watch 1, whose observer then blocks in the hand-over of an
    /// event on the reading thread (it is alone on the stream) until ``ScriptedWatch/unblock()``.
    static func watchBlockedInHandOver(_ key: String, on channel: EtcdGRPCWatchChannel, server: ScriptedCarrier)
        -> ScriptedWatch
    {
        let watch = ScriptedWatch(key, on: channel)
        #expect(eventually { server.creates == 1 })
        server.answer(created(1))
        #expect(eventually { watch.responses.count == 1 })
        watch.block()
        server.answer(event(1, key))
        #expect(eventually { watch.eventKeys == [key] })
        return watch
    }

    /// A watch alone on its stream whose observer blocks on the reading thread: a new watch does not wait
    /// behind it (longer than the patience), it takes a stream of its own, which the watches after it share.
    @Test func aWatchComingWhileTheOneAloneIsBlockedTakesANewStream() {
        let (channels, channel, server) = Self.channel(places: 1, handOverPatience: .milliseconds(100))
        defer { withExtendedLifetime(channels) {} }
        let blocked = Self.watchBlockedInHandOver("blocked", on: channel, server: server)
        let firstStream = server.exchange

        let (second, opens) = channels.join(Self.key, on: server)
        #expect(opens && second !== channel, "a new watch joined a stream held by a blocked observer")
        second.open(token: nil, limits: .standard)
        #expect(server.opened == 2)
        let next = channels.join(Self.key, on: server)
        #expect(next.channel === second && !next.opens, "the next watch joins the new stream")
        let other = ScriptedWatch("other", on: second), third = ScriptedWatch("third", on: second)
        #expect(eventually { server.creates == 1 })
        server.answer(Self.created(0))
        #expect(eventually { server.creates == 2 })
        server.answer(Self.created(1))
        server.answer(Self.event(0, "other"))
        server.answer(Self.event(1, "third"))
        #expect(eventually { other.eventKeys.count + third.eventKeys.count == 2 })

        blocked.unblock()
        blocked.stop()
        other.stop()
        third.stop()
        #expect(eventually { firstStream.cancelled && server.exchange.cancelled })
    }

    /// Stores that start watching together (after a failover, say) while the first one's answer is being
    /// handed over on the reading thread: a hand-over that ends within the patience keeps them on one stream.
    @Test func aWatchComingDuringABriefHandOverWaitsForItAndJoinsTheSameStream() {
        let (channels, channel, server) = Self.channel(places: 1, handOverPatience: .seconds(30))
        defer { withExtendedLifetime(channels) {} }
        let first = Self.watchBlockedInHandOver("first", on: channel, server: server)

        let joined = Locked<(channel: EtcdGRPCWatchChannel, opens: Bool)?>(nil)
        Thread {
            let result = channels.join(Self.key, on: server)
            joined.withLock { $0 = result }
        }.start()
        #expect(
            !eventually(timeout: .milliseconds(300)) { joined.withLock { $0 } != nil },
            "the new watch did not wait for the hand-over")
        first.unblock()
        #expect(eventually { joined.withLock { $0 } != nil })
        let (again, opens) = joined.withLock { $0 }!
        #expect(again === channel && !opens, "the new watch took a stream of its own")
        #expect(server.opened == 1)
        let second = ScriptedWatch("second", on: channel)
        #expect(eventually { server.creates == 2 })
        server.answer(Self.created(2))
        server.answer(Self.event(2, "second"))
        #expect(eventually { second.eventKeys == ["second"] })

        first.stop()
        second.stop()
        #expect(eventually { server.exchange.cancelled })
    }

    @Test func aWatchThatFallsBehindIsCancelledWhileTheOthersGoOn() {
        let (channels, channel, server) = Self.channel(places: 2)
        defer { withExtendedLifetime(channels) {} }
        let slow = ScriptedWatch("slow", on: channel)
        #expect(eventually { server.creates == 1 })
        let other = ScriptedWatch("other", on: channel)
        server.answer(Self.created(1))
        #expect(eventually { server.creates == 2 })
        server.answer(Self.created(2))
        #expect(eventually { slow.responses.count == 1 && other.responses.count == 1 })
        slow.block()
        server.answer(Self.event(1, "slow"))
        #expect(eventually { slow.eventKeys == ["slow"] }, "the slow watch's observer never ran")
        // 12 × 100 KB while its observer blocks: more than an inbox holds.
        for _ in 0..<12 { server.answer(Self.event(1, "slow", bytes: 100_000)) }
        server.answer(Self.event(2, "other"))
        #expect(eventually { other.eventKeys == ["other"] }, "a blocked watch stalled another on the stream")
        slow.unblock()
        #expect(eventually { slow.outcome == "fell behind" }, "\(slow.outcome ?? "running")")
        #expect(slow.eventKeys == ["slow"], "what was in its inbox is dropped: it watches again from its revision")
        #expect(eventually { server.cancels == [1] })
        server.answer(Self.event(2, "other"))
        #expect(eventually { other.eventKeys == ["other", "other"] })
        other.stop()
        #expect(eventually { server.exchange.cancelled })
    }

    @Test func theStreamsEndReachesEveryWatchOnIt() {
        let (channels, channel, server) = Self.channel(places: 3)
        defer { withExtendedLifetime(channels) {} }
        let a = ScriptedWatch("a", on: channel)
        #expect(eventually { server.creates == 1 })
        let b = ScriptedWatch("b", on: channel), waiting = ScriptedWatch("waiting", on: channel)
        server.answer(Self.created(1))
        #expect(eventually { server.creates == 2 })
        server.answer(Self.created(2))
        #expect(eventually { server.creates == 3 })
        server.exchange.deliver(GRPCScript.trailers(14, "etcdserver: no leader"))
        for watch in [a, b, waiting] {
            #expect(
                eventually { watch.outcome?.contains("etcdserver: no leader") == true }, "\(watch.outcome ?? "running")"
            )
        }
        // A new place on the key opens a new stream.
        #expect(channels.join(Self.key, on: server).opens)
    }
}
