import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A running store whose etcd cluster is re-created at the same address (disaster recovery: new data, a
/// new cluster ID, revisions from 1 again): the store notices it on the next answer and takes the new
/// cluster in as an account change, as at start-up; another process's writes into the new cluster arrive.
@Suite(.serialized, EtcdCluster.required) struct EtcdAccountChangeTests {
    let directory = TemporaryDirectory()

    /// What the running store's observers heard: store observations, posted notifications, errors.
    final class Listener {
        let changes = CloudRecorder()
        let errors = ErrorRecorder()
        let posted = Locked<[(reason: Int?, keys: Set<String>)]>([])
        private var tokens: [DefaultsObservation] = []
        private var notification: (any NSObjectProtocol)?

        init(_ store: CloudKeyValueStore) {
            tokens = [
                store.observe { [changes] in changes.record($0) }, store.observeErrors { [errors] in errors.record($0) }
            ]
            notification = NotificationCenter.default.addObserver(
                forName: CloudKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
            ) { [posted] note in
                let keys = Set(note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? [])
                posted.withLock { $0.append((note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int, keys)) }
            }
        }

        /// The keys of the errors that report a dropped write.
        var droppedKeys: [String?] {
            errors.errors.filter { $0.message.contains("unsent write was dropped") }.map(\.key)
        }

        func cancel() {
            tokens.forEach { $0.cancel() }
            notification.map(NotificationCenter.default.removeObserver)
        }
    }

    /// The cluster the store's values came from, as its state records it.
    private func clusterID(of store: CloudKeyValueStore) -> String? {
        store.core.state.withLock { $0.account?.clusterID }
    }

    /// Another process ("machine") writes `key` = `value` (the agent's value syntax) into the cluster.
    private func otherProcessWrites(_ node: EtcdCluster, _ namespace: String, _ key: String, _ value: String) throws
        -> Int32
    {
        try TestAgent.run([
            "cloud", node.endpoints.map(\.absoluteString).joined(separator: ","), namespace,
            directory.file("other-\(UInt32.random(in: 0 ... .max))").path, "set", key, value
        ])
    }

    @Test func aClusterReCreatedUnderARunningStoreIsAnAccountChangeAndItsWatchMovesToTheNewCluster() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let store = try cloudMachine(node.endpoints, namespace: namespace, state: directory.file("here"))
        let fleet = CloudFleet(store: store)
        fleet.workers = 7
        fleet.logLevel = "debug"
        fleet.hosts = ["a", "b"]
        #expect(store.synchronize())
        let clusterA = try #require(clusterID(of: store))
        #expect(Set(store.values().keys) == ["fleet_workers", "fleet_log-level", "fleet_hosts"])
        let listener = Listener(store)
        defer { listener.cancel() }

        node.kill(0)  // cluster A stopped by PID
        fleet.limit = 2.5  // made while A is down: pending, on A's revisions
        #expect(store.core.state.withLock { $0.pending.keys.sorted() } == ["fleet_limit"])
        let flags = FleetFlags(fleet)
        try node.replaceWithNewCluster { (endpoints: [URL]) throws in
            // cluster B: other values, filled before the store can reach it
            #expect(try rawEtcdPut(endpoints[0], namespace, "fleet_workers", "9"))
            #expect(try rawEtcdPut(endpoints[0], namespace, "fleet_log-level", #""debug""#))  // as on A
            #expect(try rawEtcdPut(endpoints[0], namespace, "fleet_endpoint", #"{"host":"b","port":2}"#))
        }

        let differing: Set<String> = ["fleet_workers", "fleet_hosts", "fleet_limit", "fleet_endpoint"]
        #expect(listener.changes.waitFor(key: "fleet_workers", reason: .accountChange, timeout: .seconds(20)))
        #expect(store.synchronize())
        store.settle()
        #expect(clusterID(of: store) != clusterA)
        #expect(listener.changes.changes == [CloudChange(keys: differing, reason: .accountChange)])
        #expect(eventually { !listener.posted.withLock { $0 }.isEmpty })
        #expect(listener.posted.withLock { $0 }.map(\.reason) == [NSUbiquitousKeyValueStoreAccountChange])
        #expect(listener.posted.withLock { $0 }.first?.keys == differing)
        #expect(flags.fired == ["workers", "hosts", "limit", "endpoint"])
        #expect(fleet.workers == 9 && fleet.logLevel == "debug" && fleet.hosts == [] && fleet.limit == nil)
        #expect(fleet.endpoint == CloudEndpoint(host: "b", port: 2))
        #expect(listener.errors.waitFor("unsent write was dropped"))
        #expect(listener.droppedKeys == ["fleet_limit"])
        #expect(try rawEtcdValue(node.endpoints[0], namespace, "fleet_limit") == nil)  // not uploaded to B

        // The watch runs on B: another process's write (of a key B lacks: its fresh store writes before its
        // first read, which a key B holds would win) arrives, as a server change.
        #expect(try otherProcessWrites(node, namespace, "fleet_limit", "double:1.5") == 0)
        #expect(eventually(timeout: .seconds(15)) { fleet.limit == 1.5 })
        #expect(listener.changes.changes.last == CloudChange(keys: ["fleet_limit"], reason: .serverChange))
    }

    /// Each kind of answer is checked: a request (status, a read's range, an upload's transaction), a
    /// status probe, and the watch's first message.
    @Test func everyKindOfAnswerFromAnotherClusterIsRefusedAndRemembered() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let configuration = EtcdConfiguration(
            endpoints: etcd.endpoints, namespace: namespace, stateDirectory: directory.file("s"), requestTimeout: 2)
        let requests: [(String, (EtcdClient) throws(DefaultsError) -> Void)] = [
            ("status", { client throws(DefaultsError) in _ = try client.status() }),
            (
                "upload",
                { client throws(DefaultsError) in
                    _ = try client.compareAndSwap(key: "k", value: Data("1".utf8), expected: 0)
                }
            )
        ]
        for (label, request) in requests {
            let client = EtcdClient(configuration: configuration)
            client.cluster.expect("1")  // no real cluster has this ID
            #expect(throws: DefaultsError.self, "\(label)") { try request(client) }
            do { try request(client) } catch {
                #expect(
                    client.cluster.refused(with: error) && error.message.contains("not cluster 1"), "\(label): \(error)"
                )
            }
            #expect(client.cluster.foundAnotherCluster, "\(label)")
        }
        // the transaction itself ran: only its answer is refused
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "1")

        // A namespace read takes any cluster in (its caller compares the accounts); then answers pass again.
        let client = EtcdClient(configuration: configuration)
        client.cluster.expect("1")
        let (header, _) = try client.readNamespace()
        #expect(!client.cluster.foundAnotherCluster)
        client.cluster.expect(header.clusterID)
        _ = try client.status()

        // The probe over the gateway is a status call: responsive, and the other cluster remembered. Over gRPC,
        // with the connection open, it is an HTTP/2 PING, which carries no header: another cluster shows in
        // the next call's or the watch's answer instead.
        let gatewayClient = EtcdClient(configuration: configuration.overGateway)
        gatewayClient.cluster.expect("1")
        #expect(gatewayClient.isResponsive(etcd.endpoints[0], timeout: 2))
        #expect(gatewayClient.cluster.foundAnotherCluster)
        client.cluster.expect("1")
        #expect(client.isResponsive(etcd.endpoints[0], timeout: 2))
        #expect(!client.cluster.foundAnotherCluster)
        #expect(throws: DefaultsError.self) { try client.status() }
        #expect(client.cluster.foundAnotherCluster)

        client.cluster.expect("1")
        let ends = Locked<[EtcdWatchStream.End]>([])
        let events = Locked(0)
        let watch = EtcdWatchStream(
            endpoint: etcd.endpoints[0], wire: client.wire, prefix: namespace + "/", startRevision: 1,
            token: nil,
            cluster: client.cluster, onEvents: { _, _ in events.withLock { $0 += 1 } },
            onEnd: { end in ends.withLock { $0.append(end) } })
        watch.start()
        defer { watch.cancel() }
        #expect(eventually { !ends.withLock { $0 }.isEmpty })
        guard case .failed(let error) = ends.withLock({ $0 }).first else {
            Issue.record("the watch did not fail: \(ends.withLock { $0 })"); return
        }
        #expect(client.cluster.refused(with: error))
        #expect(events.withLock { $0 } == 0)  // the key written above is not taken from another cluster's watch
        #expect(client.cluster.foundAnotherCluster)
    }

    @Test func aClusterReCreatedWithTheSameValuesAnnouncesNothing() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let store = try cloudMachine(node.endpoints, namespace: namespace, state: directory.file("here"))
        store.set("x", forKey: "a")
        store.set(2, forKey: "b")
        #expect(store.synchronize())
        // A's revisions run far ahead of B's: a watch resumed on B from A's revision would miss B's writes.
        for index in 0..<30 { #expect(try rawEtcdPut(node.endpoints[0], namespace + "-elsewhere", "k", "\(index)")) }
        #expect(try rawEtcdPut(node.endpoints[0], namespace, "b", "2"))  // rewritten, same value: a new revision on A
        #expect(eventually { store.core.state.withLock { $0.lastRevision } >= 33 })
        let clusterA = try #require(clusterID(of: store))
        let listener = Listener(store)
        defer { listener.cancel() }

        node.kill(0)
        try node.replaceWithNewCluster { (endpoints: [URL]) throws in
            #expect(try rawEtcdPut(endpoints[0], namespace, "a", #""x""#))
            #expect(try rawEtcdPut(endpoints[0], namespace, "b", "2"))
        }
        #expect(eventually(timeout: .seconds(20)) { clusterID(of: store).map { $0 != clusterA } ?? false })
        #expect(store.synchronize())

        #expect(try otherProcessWrites(node, namespace, "marker", "int:1") == 0)
        #expect(listener.changes.waitFor(key: "marker", reason: .serverChange))
        #expect(listener.changes.changes(before: "marker") == [])
        #expect(listener.posted.withLock { $0 }.allSatisfy { $0.keys == ["marker"] })
        #expect(listener.droppedKeys == [])
        #expect(store.values() == ["a": .string("x"), "b": .integer(2), "marker": .integer(1)])
    }
}
