import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Stores over gRPC through `etcd grpc-proxy` (which serves no JSON gateway): reads, writes and watches work
/// through it as directly, and the proxy coalesces the watches of many stores on one namespace into one
/// watcher on the member — what lets a fleet grow past one member's limits.
@Suite(.serialized, EtcdCluster.required) struct EtcdGRPCProxyTests {
    let directory = TemporaryDirectory()

    @Test func storesThroughAProxyReadWriteAndWatchAsDirectly() throws {
        let cluster = try EtcdCluster(members: 1)
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        defer { proxy.stop() }
        let namespace = freshNamespace()
        #expect(try rawEtcdPut(cluster.endpoints[0], namespace, "before", "\"set before\""))

        let proxied = try cloudMachine([proxy.endpoint], namespace: namespace, state: directory.file("proxied"))
        let direct = try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("direct"))
        #expect(proxied.synchronize(timeout: 20) && direct.synchronize(timeout: 20))
        #expect(proxied.string(forKey: "before") == "set before")

        let heardThroughProxy = CloudRecorder(), heardDirectly = CloudRecorder()
        let observations = [
            proxied.observe { heardThroughProxy.record($0) }, direct.observe { heardDirectly.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }
        proxied.set(8080, forKey: "port")
        #expect(heardDirectly.waitFor(key: "port"))
        #expect(direct.longLong(forKey: "port") == 8080)
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "port") == "8080")

        direct.set("example.org", forKey: "host")
        #expect(heardThroughProxy.waitFor(key: "host"))
        #expect(proxied.string(forKey: "host") == "example.org")
        #expect(heardThroughProxy.changes.allSatisfy { $0.reason == .serverChange && !$0.keys.contains("port") })

        // A compare-and-swap through the proxy: the server wins a conflict there too.
        #expect(try proxied.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } == 1)
        #expect(try direct.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } == 2)
        #expect(try proxied.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } == 3)
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "count") == "3")
    }

    @Test func theProxyServesManyStoresOfANamespaceWithOneWatcherOnTheMember() throws {
        let cluster = try EtcdCluster(members: 1)
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        defer { proxy.stop() }
        let before = try #require(etcdWatcherCount(cluster.endpoints[0]))
        let namespace = freshNamespace()
        let stores = try (0..<5).map { index in
            try cloudMachine([proxy.endpoint], namespace: namespace, state: directory.file("store-\(index)"))
        }
        let recorders = stores.map { _ in CloudRecorder() }
        let observations = zip(stores, recorders).map { store, recorder in store.observe { recorder.record($0) } }
        defer { observations.forEach { $0.cancel() } }
        #expect(stores.allSatisfy { $0.synchronize(timeout: 20) })

        // Every store hears a change through its own watch on the proxy...
        #expect(try rawEtcdPut(cluster.endpoints[0], namespace, "level", "\"debug\""))
        for recorder in recorders { #expect(recorder.waitFor(key: "level")) }
        // ...while the member serves one watcher for all of them.
        #expect(
            eventually { etcdWatcherCount(cluster.endpoints[0]) == before + 1 },
            "\(etcdWatcherCount(cluster.endpoints[0]) ?? -1)")

        // The same stores straight to the member: one watcher each.
        let direct = try (0..<3).map { index in
            try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("direct-\(index)"))
        }
        #expect(direct.allSatisfy { $0.synchronize(timeout: 20) })
        #expect(
            eventually { etcdWatcherCount(cluster.endpoints[0]) == before + 4 },
            "\(etcdWatcherCount(cluster.endpoints[0]) ?? -1)")
    }

    @Test func aGatewayStoreSaysThatTheProxyServesGRPCOnly() throws {
        let cluster = try EtcdCluster.sharedNode()
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        defer { proxy.stop() }
        let store = try cloudMachine(
            [proxy.endpoint], namespace: freshNamespace(), state: directory.file("gateway"), transport: .gateway)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(!store.synchronize(timeout: 2))
        #expect(errors.waitFor("404"), "\(errors.errors.map(\.message))")
    }
}
