import Foundation
import Testing
import TestSupport
@testable import ObservableDefaults

/// `CloudKeyValueStore.performBatchUpdates(_:)` against real etcd: a batch goes up as one transaction, other
/// machines see it at one revision in one change, a batch that lost loses whole, and a big one goes in parts.
@Suite(.serialized, EtcdCluster.required) struct EtcdBatchTests {
    let directory = TemporaryDirectory()

    /// Whether every change `recorder` heard holds all of `keys` or none of them.
    private func neverHalf(_ recorder: CloudRecorder, _ keys: Set<String>) -> Bool {
        recorder.changes.allSatisfy { $0.keys.isDisjoint(with: keys) || $0.keys.isSuperset(of: keys) }
    }

    @Test func aBatchReachesAnotherMachineAtOneRevisionInOneChange() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let heard = CloudRecorder()
        let observation = b.observe { heard.record($0) }
        defer { observation.cancel() }

        let result = a.performBatchUpdates {
            a.set("db2.internal", forKey: "host")
            a.set(Int64(5433), forKey: "port")
            a.performBatchUpdates { a.set(true, forKey: "tls") }  // nested: the same batch
            #expect(a.string(forKey: "host") == "db2.internal")  // memory has each write at once
            return 42
        }
        #expect(result == 42)
        #expect(a.synchronize())
        #expect(heard.waitFor(key: "host"))
        #expect(heard.changes == [CloudChange(keys: ["host", "port", "tls"], reason: .serverChange)])
        let revisions = try ["host", "port", "tls"].map { try rawEtcdModRevision(etcd.endpoints[0], namespace, $0) }
        #expect(revisions[0] != nil && Set(revisions).count == 1, "\(revisions)")
        #expect(b.longLong(forKey: "port") == 5433 && b.bool(forKey: "tls"))

        // A removal and a write in one batch.
        a.performBatchUpdates {
            a.removeObject(forKey: "tls")
            a.set(Int64(5434), forKey: "port")
        }
        #expect(a.synchronize())
        #expect(eventually { b.value(forKey: "tls") == nil && b.longLong(forKey: "port") == 5434 })
        #expect(eventually { heard.changes.count == 2 })
        #expect(Array(heard.changes.dropFirst()) == [CloudChange(keys: ["tls", "port"], reason: .serverChange)])
    }

    @Test func anotherProcesssBatchArrivesWhole() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let watcher = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("watcher"))
        #expect(watcher.synchronize())
        let heard = CloudRecorder()
        let observation = watcher.observe { heard.record($0) }
        defer { observation.cancel() }
        let keys: Set<String> = ["k1", "k2", "k3", "k4", "k5"]
        for round in 1...3 {
            let arguments = keys.sorted().flatMap { [$0, "int:\(round)"] }
            #expect(
                try TestAgent.run(
                    ["cloud", etcd.endpoints[0].absoluteString, namespace, directory.file("agent").path, "batch"]
                        + arguments) == 0)
            // Each batch has arrived before the next is written, so that two cannot share a watch message.
            #expect(eventually { keys.allSatisfy { watcher.longLong(forKey: $0) == Int64(round) } })
        }
        #expect(neverHalf(heard, keys), "\(heard.changes)")
        #expect(heard.changes.count == 3)
    }

    @Test func aBatchThatLostToAnotherMachineLosesWhole() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        let cutOff = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: directory.file("cut-off"))
        here.performBatchUpdates {
            here.set("db1", forKey: "host")
            here.set(Int64(5432), forKey: "port")
        }
        #expect(here.synchronize())
        #expect(eventually { cutOff.string(forKey: "host") == "db1" && cutOff.longLong(forKey: "port") == 5432 })
        let heard = CloudRecorder()
        let observation = cutOff.observe { heard.record($0) }
        defer { observation.cancel() }

        cluster.kill(2)
        #expect(cutOff.synchronize(timeout: 1) == false)
        cutOff.performBatchUpdates {
            cutOff.set("db2", forKey: "host")
            cutOff.set(Int64(6432), forKey: "port")
        }
        here.set("db3", forKey: "host")  // meanwhile, elsewhere: only the host
        #expect(here.synchronize())
        try cluster.restart(2)
        #expect(cutOff.synchronize(timeout: 20))
        // The batch was one write, and it lost: neither of its values is on the server.
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "host") == #""db3""#)
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "port") == "5432")
        #expect(cutOff.string(forKey: "host") == "db3" && cutOff.longLong(forKey: "port") == 5432)
        #expect(heard.waitFor(key: "port", reason: .serverChange))
        #expect(heard.changes.contains { $0.keys == ["host", "port"] && $0.reason == .serverChange })
        #expect(!cutOff.hasPendingChanges)
    }

    @Test func anUpdateInABatchRunsAgainAndTheBatchStillGoesUpWhole() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        let cutOff = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: directory.file("cut-off"))
        try here.update(Int.self, forKey: "count") { _ in 10 }
        #expect(eventually { cutOff.longLong(forKey: "count") == 10 })

        cluster.kill(2)
        #expect(cutOff.synchronize(timeout: 1) == false)
        let counted = try cutOff.performBatchUpdates { () throws -> Int? in
            cutOff.set("on", forKey: "flag")
            return try cutOff.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 }
        }
        #expect(counted == 11)
        #expect(try here.update(Int.self, forKey: "count") { ($0 ?? 0) + 5 } == 15)  // only the counter moved
        try cluster.restart(2)
        #expect(cutOff.synchronize(timeout: 20))
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "count") == "16")
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "flag") == #""on""#)
        let revisions = try ["count", "flag"].map { try rawEtcdModRevision(cluster.endpoints[0], namespace, $0) }
        #expect(revisions[0] != nil && revisions[0] == revisions[1])
        #expect(cutOff.longLong(forKey: "count") == 16)
    }

    @Test func aBatchWrittenOfflineSurvivesARestartAndGoesUpAsOneTransaction() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let watcher = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("watcher"))
        #expect(watcher.synchronize())
        let heard = CloudRecorder()
        let observation = watcher.observe { heard.record($0) }
        defer { observation.cancel() }
        let state = directory.file("writer")
        cluster.kill(2)
        do {
            let writer = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: state)
            #expect(writer.synchronize(timeout: 1) == false)
            writer.performBatchUpdates {
                for key in ["p", "q", "r"] { writer.set(key.uppercased(), forKey: key) }
            }
        }  // released with the batch unsent: its local copy keeps it, batch and all
        try cluster.restart(2)
        let restarted = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: state)
        #expect(restarted.string(forKey: "q") == "Q")
        #expect(restarted.synchronize(timeout: 20))
        #expect(heard.waitFor(key: "p"))
        #expect(heard.changes == [CloudChange(keys: ["p", "q", "r"], reason: .serverChange)])
        let revisions = try ["p", "q", "r"].map { try rawEtcdModRevision(cluster.endpoints[0], namespace, $0) }
        #expect(revisions[0] != nil && Set(revisions).count == 1)
    }

    @Test func aBatchBiggerThanTheConfiguredLimitGoesUpInPartsAndSaysSo() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        var configuration = EtcdConfiguration(
            endpoints: etcd.endpoints, namespace: namespace, stateDirectory: directory.file("a"), requestTimeout: 2,
            probeInterval: 0.5)
        configuration.maxTransactionOperations = 4
        let store = try CloudKeyValueStore(etcd: configuration)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize())
        store.performBatchUpdates {
            for index in 0..<10 { store.set(Int64(index), forKey: "k\(index)") }
        }
        #expect(store.synchronize())
        for index in 0..<10 { #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k\(index)") == "\(index)") }
        #expect(errors.waitFor("a batch of 10 keys is more than etcd takes in one transaction"))
        #expect(errors.errors.contains { $0.message.contains("3 transactions of at most 4 keys") })
        let revisions = try (0..<10).map { try rawEtcdModRevision(etcd.endpoints[0], namespace, "k\($0)")! }
        #expect(Set(revisions).count == 3)  // parts of 4, 4 and 2 keys, in key order
    }

    @Test func aServerTakingFewerOperationsSplitsTheBatchAndSaysSo() throws {
        let cluster = try EtcdCluster(members: 1, extraArguments: ["--max-txn-ops", "4"])
        let namespace = freshNamespace()
        let store = try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("a"))
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize())
        store.performBatchUpdates {
            for index in 0..<10 { store.set(Int64(index), forKey: "k\(index)") }
        }
        #expect(store.synchronize(timeout: 20))
        for index in 0..<10 { #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "k\(index)") == "\(index)") }
        #expect(errors.waitFor("too many operations in txn request"))
        #expect(!store.hasPendingChanges)
    }
}
