import EtcdLauncher
import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// The watches of the stores sharing a connection share one gRPC Watch stream, each a watch ID of its own
/// (``EtcdGRPCWatchChannel``, as etcd's Go client does): the member counts one stream for them, each store
/// gets its own namespace's changes and no other's, a store that goes cancels its watch on the stream, the
/// last one closes the stream, through `etcd grpc-proxy` (whose `created` answers need not follow the order of
/// the creates) stores starting at once still each get their own watch, and when the member the stream is on
/// is killed every store on it watches again elsewhere and misses nothing.
@Suite(.serialized, EtcdCluster.required) struct EtcdWatchChannelTests {
    let directory = TemporaryDirectory()

    private func store(_ endpoints: [URL], _ namespace: String, _ name: String, sharing: Bool = true) throws
        -> CloudKeyValueStore
    {
        try cloudMachine(
            endpoints, namespace: namespace, state: directory.file(name), sharesConnections: sharing,
            requestTimeout: 5)
    }

    /// Puts a different value in each namespace; each store must hear its own once and no other.
    private func expectEachHearsItsOwn(
        _ stores: [CloudKeyValueStore], _ namespaces: [String], round: Int, on member: URL,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let recorders = stores.map { _ in CloudRecorder() }
        let observations = zip(stores, recorders).map { store, recorder in store.observe { recorder.record($0) } }
        defer { observations.forEach { $0.cancel() } }
        for (index, namespace) in namespaces.enumerated() {
            #expect(try rawEtcdPut(member, namespace, "k", String(round * 1000 + index)))
        }
        for (index, store) in stores.enumerated() {
            #expect(
                eventually { store.longLong(forKey: "k") == Int64(round * 1000 + index) },
                "store \(index) did not get its namespace's change", sourceLocation: sourceLocation)
        }
        // A marker in each namespace: every change before it has been delivered; exactly one, the store's own.
        for namespace in namespaces { #expect(try rawEtcdPut(member, namespace, "marker", String(round))) }
        for (index, recorder) in recorders.enumerated() {
            #expect(recorder.waitFor(key: "marker"), sourceLocation: sourceLocation)
            let changes = recorder.changes(before: "marker")
            #expect(
                changes.count == 1 && changes.allSatisfy { $0.keys == ["k"] && $0.reason == .serverChange },
                "store \(index): \(changes)", sourceLocation: sourceLocation)
        }
    }

    @Test func theStoresSharingAConnectionWatchOverOneStreamEachWithAWatchOfItsOwn() throws {
        let node = try EtcdCluster(members: 1)
        let member = node.endpoints[0]
        #expect(etcdWatchStreamCount(member) == 0)
        let namespaces = (0..<12).map { freshNamespace() + "-\($0)" }
        // The first store's watch is made and idle before the others join: a watch that joins while answers
        // are handed to the one alone on the stream takes a stream of its own (``EtcdGRPCWatchChannel``).
        var stores = [try store(node.endpoints, namespaces[0], "s0")]
        #expect(stores[0].synchronize(timeout: 20))
        #expect(try rawEtcdPut(member, namespaces[0], "ready", "1"))
        #expect(eventually { stores[0].longLong(forKey: "ready") == 1 })
        stores += try namespaces.enumerated().dropFirst().map { try store(node.endpoints, $0.element, "s\($0.offset)") }
        for store in stores { #expect(store.synchronize(timeout: 20)) }
        let alone = try store(node.endpoints, freshNamespace(), "alone", sharing: false)
        #expect(alone.synchronize(timeout: 20))
        // One stream for the twelve sharing stores, one for the store with a connection of its own.
        #expect(
            eventually { etcdWatchStreamCount(member) == 2 && etcdWatcherCount(member) == 13 },
            "streams \(etcdWatchStreamCount(member) ?? -1), watchers \(etcdWatcherCount(member) ?? -1)")
        try expectEachHearsItsOwn(stores, namespaces, round: 1, on: member)

        // Half the stores go: their watches are cancelled on the stream, which stays for the others.
        stores.removeLast(6)
        #expect(
            eventually(timeout: .seconds(20)) { etcdWatcherCount(member) == 7 },
            "watchers \(etcdWatcherCount(member) ?? -1)")
        #expect(etcdWatchStreamCount(member) == 2)
        try expectEachHearsItsOwn(stores, Array(namespaces.prefix(6)), round: 2, on: member)

        // The last one closes the stream.
        stores.removeAll()
        #expect(
            eventually(timeout: .seconds(20)) { etcdWatchStreamCount(member) == 1 && etcdWatcherCount(member) == 1 },
            "streams \(etcdWatchStreamCount(member) ?? -1), watchers \(etcdWatcherCount(member) ?? -1)")
        for store in [alone] { #expect(store.currentErrors.isEmpty, "\(store.currentErrors)") }
    }

    @Test func storesStartingAtOnceThroughAProxyEachGetTheirOwnWatch() throws {
        let cluster = try EtcdCluster(members: 1)
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        defer { proxy.stop() }
        let namespaces = (0..<12).map { freshNamespace() + "-\($0)" }
        // Half the namespaces already watched through the proxy: a create for a range the proxy watches
        // already is answered at once, one for a new range after the member's answer.
        let early = try namespaces.enumerated().filter { $0.offset.isMultiple(of: 2) }.map {
            try store([proxy.endpoint], $0.element, "early\($0.offset)", sharing: false)
        }
        for store in early { #expect(store.synchronize(timeout: 20)) }
        let made = Mutex<[Int: CloudKeyValueStore]>([:])
        let url = directory.url
        DispatchQueue.concurrentPerform(iterations: namespaces.count) { index in
            var configuration = EtcdConfiguration(
                endpoints: [proxy.endpoint], namespace: namespaces[index],
                stateDirectory: url.appendingPathComponent("at-once\(index)"), requestTimeout: 5, probeInterval: 0.5)
            configuration.sharesConnections = true
            guard let store = try? CloudKeyValueStore(etcd: configuration) else { return }
            _ = store.synchronize(timeout: 20)
            made.withLock { $0[index] = store }
        }
        let stores = try (0..<namespaces.count).map { index in try #require(made.withLock { $0[index] }) }
        try expectEachHearsItsOwn(stores, namespaces, round: 1, on: cluster.endpoints[0])
        for store in stores { #expect(store.currentErrors.isEmpty, "\(store.currentErrors)") }
    }

    @Test func whenTheStreamsMemberIsKilledEveryStoreOnItWatchesAgainElsewhereAndMissesNothing() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespaces = (0..<8).map { freshNamespace() + "-\($0)" }
        // Every store watches the first member it is given: m0.
        let stores = try namespaces.enumerated().map { try store(cluster.endpoints, $0.element, "f\($0.offset)") }
        for store in stores { #expect(store.synchronize(timeout: 20)) }
        #expect(eventually { etcdWatchStreamCount(cluster.endpoints[0]) == 1 })
        let recorders = stores.map { _ in CloudRecorder() }
        let observations = zip(stores, recorders).map { store, recorder in store.observe { recorder.record($0) } }
        defer { observations.forEach { $0.cancel() } }
        let survivor = cluster.endpoints[1]
        for namespace in namespaces { #expect(try rawEtcdPut(survivor, namespace, "k", "1")) }
        for store in stores { #expect(eventually { store.longLong(forKey: "k") == 1 }) }

        cluster.kill(0)
        // Written at once, while the stores are still finding out: they must get it on their new watches. (If
        // m0 led, the survivors refuse writes until they elect a leader.)
        for namespace in namespaces {
            #expect(eventually(timeout: .seconds(30)) { (try? rawEtcdPut(survivor, namespace, "k", "2")) == true })
        }
        for (index, store) in stores.enumerated() {
            #expect(
                eventually(timeout: .seconds(30)) { store.longLong(forKey: "k") == 2 },
                "store \(index) did not get the change written after the kill")
        }
        for namespace in namespaces {
            #expect(eventually(timeout: .seconds(30)) { (try? rawEtcdPut(survivor, namespace, "marker", "1")) == true })
        }
        for (index, recorder) in recorders.enumerated() {
            #expect(recorder.waitFor(key: "marker", timeout: .seconds(30)))
            let changes = recorder.changes(before: "marker")
            #expect(changes.count == 2 && changes.allSatisfy { $0.keys == ["k"] }, "store \(index): \(changes)")
        }
        // The stores that shared a stream on m0 share one on the member they moved to.
        #expect(
            eventually(timeout: .seconds(20)) {
                cluster.endpoints.dropFirst().compactMap(etcdWatchStreamCount).reduce(0, +) == 1
            },
            "\(cluster.endpoints.dropFirst().map { etcdWatchStreamCount($0) ?? -1 })")
    }
}
