import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// The stores of one process share one HTTP/2 connection per member over gRPC (issue 31's fleet target, as
/// etcd's Go client shares one connection among a client's calls and watches): what they share, when it
/// closes, who may share (other etcd users: tokens travel per call), that one store that stops reading its
/// watch stalls no other, that a sibling's timed-out call ends the others' watches honestly and loses
/// nothing, and that one stream's frames wake that stream's reader alone.
@Suite(.serialized, EtcdCluster.required) struct EtcdSharedConnectionTests {
    let directory = TemporaryDirectory()

    /// The connections a store's wire calls and watches over.
    static func connections(_ store: CloudKeyValueStore) -> EtcdGRPCConnections? {
        (store.sync?.client.wire as? EtcdGRPCWire)?.connections
    }

    static func count(_ directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1
    }

    /// A store of `namespace` on `endpoints` over gRPC (sharing or not), probing every half second.
    func store(
        _ endpoints: [URL], _ namespace: String, _ name: String, sharing: Bool = true, user: String? = nil,
        password: String? = nil, probeInterval: TimeInterval = 0.5
    ) throws -> CloudKeyValueStore {
        try cloudMachine(
            endpoints, namespace: namespace, state: directory.file(name), user: user, password: password,
            sharesConnections: sharing, probeInterval: probeInterval)
    }

    @Test func theStoresOfAProcessShareOneConnectionPerMemberUnlessOneAsksForItsOwn() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespaces = (0..<3).map { freshNamespace() + "-\($0)" }
        let stores = try namespaces.enumerated().map { try store(etcd.endpoints, $0.element, "s\($0.offset)") }
        for store in stores { #expect(store.synchronize(timeout: 20)) }
        let shared = try #require(Self.connections(stores[0]))
        for store in stores.dropFirst() { #expect(Self.connections(store) === shared) }
        #expect(shared.openCount == 1)

        let alone = try store(etcd.endpoints, namespaces[0], "own", sharing: false)
        #expect(alone.synchronize(timeout: 20))
        let own = try #require(Self.connections(alone))
        #expect(own !== shared)
        #expect(own.openCount == 1)

        // Every store's watch gets its namespace's changes, each on its own stream of the one connection.
        let recorders = stores.map { store in
            let recorder = CloudRecorder()
            return (recorder, store.observe { recorder.record($0) })
        }
        let aloneRecorder = CloudRecorder()
        let aloneObservation = alone.observe { aloneRecorder.record($0) }
        defer {
            for (_, observation) in recorders { observation.cancel() }
            aloneObservation.cancel()
        }
        for namespace in namespaces { #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "k", "1")) }
        for (index, (recorder, _)) in recorders.enumerated() {
            #expect(recorder.waitFor(key: "k", reason: .serverChange), "store \(index)")
        }
        #expect(aloneRecorder.waitFor(key: "k", reason: .serverChange))
        #expect(shared.openCount == 1)
        for store in stores + [alone] { #expect(store.currentErrors.isEmpty, "\(store.currentErrors)") }
    }

    /// Fifty stores starting at once open one connection: the others wait for it instead of each opening
    /// one and closing the one before.
    @Test func storesStartingAtOnceOpenOneConnection() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let opened = Mutex<[CloudKeyValueStore]>([])
        let url = directory.url
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            var configuration = EtcdConfiguration(
                endpoints: node.endpoints, namespace: namespace,
                stateDirectory: url.appendingPathComponent("start\(index)"), requestTimeout: 5, probeInterval: 0.5)
            configuration.sharesConnections = true
            guard let store = try? CloudKeyValueStore(etcd: configuration) else { return }
            _ = store.synchronize(timeout: 20)
            opened.withLock { $0.append(store) }
        }
        let stores = opened.withLock { $0 }
        try #require(stores.count == 50)
        let shared = try #require(Self.connections(stores[0]))
        #expect(stores.allSatisfy { Self.connections($0) === shared })
        #expect(shared.opened.withLock { $0 } == 1, "\(shared.opened.withLock { $0 }) connections opened")
        #expect(shared.openCount == 1)
        for store in stores { #expect(store.currentErrors.isEmpty, "\(store.currentErrors)") }
    }

    /// Many stores, released: their shared connection closes with the last one, and its socket and reader
    /// thread go, as do every store's threads.
    @Test func releasedStoresLeaveNoConnectionThreadOrDescriptorBehind() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let threadsBefore = Self.count("/proc/self/task"), descriptorsBefore = Self.count("/proc/self/fd")
        weak var released: EtcdGRPCConnections?
        do {
            let stores = try (0..<20).map { try store(node.endpoints, namespace, "r\($0)") }
            for store in stores { #expect(store.synchronize(timeout: 20)) }
            let shared = try #require(Self.connections(stores[0]))
            #expect(stores.allSatisfy { Self.connections($0) === shared })
            #expect(shared.openCount == 1)
            #expect(Self.count("/proc/self/task") > threadsBefore + 20, "the stores' watch threads run")
            released = shared
        }
        #expect(eventually(timeout: .seconds(20)) { released == nil }, "the shared connections outlived their stores")
        // Other tests may start threads and open descriptors meanwhile: the 20 stores' must not all stay.
        #expect(
            eventually(timeout: .seconds(30)) { Self.count("/proc/self/task") < threadsBefore + 10 },
            "threads before \(threadsBefore), now \(Self.count("/proc/self/task"))")
        #expect(
            eventually(timeout: .seconds(30)) { Self.count("/proc/self/fd") < descriptorsBefore + 10 },
            "descriptors before \(descriptorsBefore), now \(Self.count("/proc/self/fd"))")
    }

    /// Stores logged in as different etcd users share the connection: each call carries its own store's
    /// token, so each store may do what its user may, and no more.
    @Test func storesOfDifferentUsersShareTheConnectionEachWithItsOwnRights() throws {
        let node = try EtcdCluster(members: 1)
        let endpoint = node.endpoints[0]
        let (rootSpace, aliceSpace) = (freshNamespace() + "-root", freshNamespace() + "-alice")
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        let end = EtcdRangeRequest.prefixEnd(aliceSpace + "/").base64EncodedString()
        for (path, body) in [
            ("/v3/auth/user/add", #"{"name":"alice","password":"wonder"}"#),
            ("/v3/auth/role/add", #"{"name":"alice"}"#),
            (
                "/v3/auth/role/grant",
                #"{"name":"alice","perm":{"permType":"READWRITE","key":"\#(base64(aliceSpace + "/"))","range_end":"\#(end)"}}"#
            ), ("/v3/auth/user/grant", #"{"user":"alice","role":"alice"}"#)
        ] {
            var answer: String?
            _ = eventually(timeout: .seconds(30)) {
                answer = try? synchronousPost(endpoint, path, body)
                return answer != nil
            }
            try #require(answer != nil, "\(path) failed")
        }
        try enableAuthentication(endpoint)

        let root = try store(node.endpoints, rootSpace, "root", user: "root", password: "secret")
        let alice = try store(node.endpoints, aliceSpace, "alice", user: "alice", password: "wonder")
        let intruder = try store(node.endpoints, rootSpace, "intruder", user: "alice", password: "wonder")
        root.set("root's", forKey: "k")
        alice.set("alice's", forKey: "k")
        #expect(root.synchronize(timeout: 20))
        #expect(alice.synchronize(timeout: 20))
        let shared = try #require(Self.connections(root))
        #expect(Self.connections(alice) === shared)
        #expect(Self.connections(intruder) === shared)
        #expect(shared.openCount == 1)

        let errors = ErrorRecorder()
        let observation = intruder.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        intruder.set("alice's", forKey: "k")
        #expect(intruder.synchronize(timeout: 3) == false)
        #expect(errors.waitFor("permission denied"), "\(errors.errors)")
        let token = try loginToken(endpoint)
        #expect(try rawEtcdValue(endpoint, rootSpace, "k", token: token) == #""root's""#)
        #expect(try rawEtcdValue(endpoint, aliceSpace, "k", token: token) == #""alice's""#)
        #expect(root.currentErrors.isEmpty, "\(root.currentErrors)")
        #expect(alice.currentErrors.isEmpty, "\(alice.currentErrors)")
    }

    /// A store whose observer blocks stops taking its watch's answers; the watch of another store on the same
    /// connection (and Watch stream) still gets every change at once, the blocked watch's inbox overflows
    /// (24 changes of 100 KB against ``EtcdGRPCWatchChannel/inboxBytes``) and it is watched again from its
    /// last revision once the observer returns, losing nothing.
    @Test func aStoreThatStopsReadingItsWatchStallsNoOtherStoreOnTheConnection() throws {
        let etcd = try EtcdCluster.sharedNode()
        let (blockedSpace, freeSpace) = (freshNamespace() + "-blocked", freshNamespace() + "-free")
        // No probes: no call waits on the connection while the observer blocks, so nothing but the reader's
        // own relief can let the other store's changes through (its watch is handled on the reader thread).
        let blocked = try store(etcd.endpoints, blockedSpace, "blocked", probeInterval: 3600)
        let free = try store(etcd.endpoints, freeSpace, "free", probeInterval: 3600)
        #expect(blocked.synchronize(timeout: 20))
        #expect(free.synchronize(timeout: 20))
        #expect(Self.connections(blocked) === Self.connections(free))

        let gate = DispatchSemaphore(value: 0)
        let entered = Recorder<Int>()
        let blockedObservation = blocked.observe(keys: ["big"]) { _ in
            entered.record(1)
            gate.wait()  // the watch thread delivering the change stops here
        }
        var opened = true
        defer {
            if opened { gate.signal() }
            blockedObservation.cancel()
        }
        let freeRecorder = CloudRecorder()
        let freeObservation = free.observe(keys: ["k"]) { freeRecorder.record($0) }
        defer { freeObservation.cancel() }

        // 24 values of 100 KB: more than the blocked stream's 1 MiB window.
        let filler = String(repeating: "x", count: 100_000)
        for index in 0..<24 { #expect(try rawEtcdPut(etcd.endpoints[0], blockedSpace, "big", "\"\(index)\(filler)\"")) }
        #expect(eventually(timeout: .seconds(10)) { !entered.items.isEmpty }, "the blocked observer never ran")
        for index in 0..<5 {
            #expect(try rawEtcdPut(etcd.endpoints[0], freeSpace, "k", String(index)))
            #expect(
                eventually(timeout: .seconds(5)) { free.longLong(forKey: "k") == Int64(index) },
                "change \(index) did not reach the other store while one store's watch was blocked")
        }
        gate.signal()
        opened = false
        for _ in 0..<30 { gate.signal() }  // the changes still queued each call the observer once
        #expect(
            eventually(timeout: .seconds(20)) { blocked.string(forKey: "big")?.hasPrefix("23x") == true },
            "the blocked store did not catch up once its observer returned")
        #expect(free.currentErrors.isEmpty, "\(free.currentErrors)")
    }

    /// A call that times out closes the shared connection (a hung member holds every stream): another
    /// store's watch ends saying why, is made again on a new connection, and misses no change.
    @Test func aTimedOutCallOfOneStoreEndsTheOthersWatchesHonestlyAndTheyLoseNothing() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let watcher = try store(etcd.endpoints, namespace, "watcher")
        let other = try store(etcd.endpoints, freshNamespace(), "other")
        #expect(watcher.synchronize(timeout: 20))
        #expect(other.synchronize(timeout: 20))
        let shared = try #require(Self.connections(other))
        #expect(Self.connections(watcher) === shared)
        let errors = ErrorRecorder()
        let errorObservation = watcher.observeErrors { errors.record($0) }
        let recorder = CloudRecorder()
        let observation = watcher.observe(keys: ["k"]) { recorder.record($0) }
        defer {
            errorObservation.cancel()
            observation.cancel()
        }
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "k", "1"))
        #expect(eventually { watcher.longLong(forKey: "k") == 1 })

        // What `other`'s wire does after one of its calls timed out.
        var timedOut = EtcdHTTP.Failure("no answer within the timeout")
        timedOut.timedOut = true
        shared.drop(etcd.endpoints[0], after: timedOut)
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "k", "2"))  // while the watch is being made again
        #expect(errors.waitFor("a call on it got no answer in time"), "\(errors.errors)")
        #expect(eventually(timeout: .seconds(15)) { watcher.longLong(forKey: "k") == 2 })
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "k", "3"))
        #expect(eventually(timeout: .seconds(15)) { watcher.longLong(forKey: "k") == 3 })
        #expect(shared.openCount == 1)
        #expect(recorder.items.allSatisfy { $0.reason == .serverChange }, "\(recorder.items)")
    }

    /// 100 watches on one connection, each of its own key, each read by a thread of its own; 20 changes to
    /// one key wake that watch's reader, not the 99 others.
    @Test func aFrameForOneStreamWakesThatStreamsReaderAlone() throws {
        let etcd = try EtcdCluster.sharedNode()
        let prefix = freshNamespace()
        let connection = try HTTP2Connection.open(
            url: etcd.endpoints[0], transport: EtcdTransport(), deadline: .now + .seconds(10))
        defer { connection.close() }
        let received = Recorder<Int>()
        let ended = DispatchGroup()
        for index in 0..<100 {
            let stream = try GRPCStream.open(
                path: EtcdProto.WatchRequest.path, deadline: nil, on: connection)
            let key = Array("\(prefix)/\(index)".utf8)
            try stream.send(
                EtcdProto.WatchRequest(.create(EtcdProto.WatchCreateRequest(key: key, rangeEnd: [], startRevision: 0))),
                deadline: .now + .seconds(10))
            ended.enter()
            let thread = Thread {
                defer { ended.leave() }
                while let response = try? stream.receive(EtcdProto.WatchResponse.self, deadline: nil) {
                    if !response.events.isEmpty { received.record(index) }
                }
            }
            thread.start()
        }
        #expect(eventually { connection.readCount > 0 })
        Thread.sleep(forTimeInterval: 0.5)  // the creations' answers arrive (not what is counted)
        let before = connection.readerWakeupsWithNothing
        for value in 0..<20 { #expect(try rawEtcdPut(etcd.endpoints[0], prefix, "0", String(value))) }
        #expect(eventually { received.items.count == 20 }, "\(received.items.count) of 20 events arrived")
        #expect(received.items.allSatisfy { $0 == 0 })
        let empty = connection.readerWakeupsWithNothing - before
        #expect(empty < 20, "readers woke \(empty) times with nothing for them (a shared condition: about 2,000)")
        connection.close()
        #expect(ended.wait(timeout: .now() + 10) == .success, "the readers did not end with the connection")
    }
}
