import Foundation
import Testing
@testable import ObservableDefaults

/// Cloud stores against one real etcd node (shared by these tests, one namespace each).
@Suite(.serialized, EtcdCluster.required) struct EtcdSyncTests {
    let directory = TemporaryDirectory()

    @Test func aWriteReachesAnotherMachineAsOnlyThatKeyAndIsReadableJSONInEtcd() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let heardByA = CloudRecorder(), heardByB = CloudRecorder()
        let observations = [a.observe { heardByA.record($0) }, b.observe { heardByB.record($0) }]
        defer { observations.forEach { $0.cancel() } }

        a.set(["cpu": 1.5, "memory": 512] as [String: Any], forKey: "limits")
        a.set("example.org", forKey: "host")
        #expect(a.synchronize())
        #expect(heardByB.waitFor(key: "host"))
        a.set(true, forKey: "marker")
        #expect(heardByB.waitFor(key: "marker"))
        #expect(Set(heardByB.changes(before: "marker").flatMap(\.keys)) == ["limits", "host"])
        #expect(heardByB.changes(before: "marker").allSatisfy { $0.reason == .serverChange })
        #expect(b.string(forKey: "host") == "example.org")
        #expect(b.dictionary(forKey: "limits")?["memory"] as? Int == 512)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "limits") == "{\n  \"cpu\": 1.5,\n  \"memory\": 512\n}")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "host") == "\"example.org\"")

        // Back the other way, and a removal; A never hears its own writes.
        b.removeObject(forKey: "host")
        #expect(heardByA.waitFor(key: "host"))
        #expect(a.string(forKey: "host") == nil)
        #expect(heardByA.changes.allSatisfy { !$0.keys.contains("marker") && !$0.keys.contains("limits") })
    }
}
