import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The upload's compare-and-swap against a real etcd. On the revision it was based on it writes; on any
/// other it writes nothing and returns the key's current pair, which a second request reads (the
/// transaction has no failure branch).
@Suite(EtcdCluster.required) struct EtcdCompareAndSwapTests {
    let directory = TemporaryDirectory()

    private func etcdClient(_ etcd: EtcdCluster, _ namespace: String) -> EtcdClient {
        EtcdClient(
            configuration: EtcdConfiguration(
                endpoints: etcd.endpoints, namespace: namespace, stateDirectory: directory.file("s"), requestTimeout: 5)
        )
    }

    @Test func aStaleSwapWritesNothingAndReturnsWhatAnotherMachineWrote() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let client = etcdClient(etcd, namespace)

        let first = try client.compareAndSwap(key: "k", value: Data("1".utf8), expected: 0)
        guard case .written(let firstRevision) = first else { Issue.record("\(first)"); return }
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "1")

        try rawEtcdPut(etcd.endpoints[0], namespace, "k", "2")  // another machine, after this write
        let stale = try client.compareAndSwap(key: "k", value: Data("3".utf8), expected: firstRevision)
        guard case .conflict(let current?, let readAt) = stale else { Issue.record("\(stale)"); return }
        #expect(current.key == "k")  // without the namespace
        #expect(current.value == Data("2".utf8))
        #expect(current.modRevision > firstRevision && readAt >= current.modRevision)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "2")

        try rawEtcdDelete(etcd.endpoints[0], namespace, "k")  // another machine removes it
        let onRemoved = try client.compareAndSwap(key: "k", value: Data("4".utf8), expected: current.modRevision)
        guard case .conflict(nil, let removedAt) = onRemoved else { Issue.record("\(onRemoved)"); return }
        #expect(removedAt > current.modRevision)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == nil)

        // An absent key's revision is 0: a swap based on it writes.
        let recreated = try client.compareAndSwap(key: "k", value: Data("5".utf8), expected: 0)
        guard case .written(let recreatedAt) = recreated else { Issue.record("\(recreated)"); return }
        #expect(recreatedAt > removedAt)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "5")
    }

    @Test func aRemovalOnAStaleRevisionKeepsTheServersValue() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let client = etcdClient(etcd, namespace)
        try rawEtcdPut(etcd.endpoints[0], namespace, "k", #""server""#)

        let result = try client.compareAndSwap(key: "k", value: nil, expected: 0)  // based on "absent"
        guard case .conflict(let current?, _) = result else { Issue.record("\(result)"); return }
        #expect(current.value == Data(#""server""#.utf8))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == #""server""#)
    }
}
