import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// `CloudKeyValueStore.observe(keys:prefix:scope:_:)`: the suite's scopes and `DefaultsChange` on the cloud store.
@Suite struct CloudObservationScopeTests {
    @Test func thisProcessHearsWritesHereAndAllProcessesAlsoChangesFromElsewhere() throws {
        let store = CloudKeyValueStore.inMemory(limits: CloudLimits(maximumValueBytes: 64))
        let here = ChangeRecorder(), everywhere = ChangeRecorder(), iCloudShaped = CloudRecorder()
        let observations = [
            store.observe(scope: .thisProcess) { here.record($0) },
            store.observe(keys: ["host", "port", "marker", "workers", "big"], scope: .allProcesses) {
                everywhere.record($0)
            },
            store.observe { iCloudShaped.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        store.set("example.org", forKey: "host")
        let fleet = CloudFleet(prefix: "", store: store)
        fleet.workers = 8
        try store.simulateExternalChange(["port": .integer(80)])
        store.set(String(repeating: "x", count: 100), forKey: "big")  // past the limits: refused, nothing changed
        store.set(true, forKey: "marker")
        store.settle()

        #expect(
            here.changes == [
                DefaultsChange(keys: ["host"], origin: .thisProcess),
                DefaultsChange(keys: ["workers"], origin: .thisProcess),
                DefaultsChange(keys: ["marker"], origin: .thisProcess)
            ])
        #expect(
            everywhere.changes == [
                DefaultsChange(keys: ["host"], origin: .thisProcess),
                DefaultsChange(keys: ["workers"], origin: .thisProcess),
                DefaultsChange(keys: ["port"], origin: .outside), DefaultsChange(keys: ["marker"], origin: .thisProcess)
            ])
        // The iCloud-shaped observer keeps hearing changes from elsewhere only (and the refusal).
        #expect(
            iCloudShaped.changes == [
                CloudChange(keys: ["port"], reason: .serverChange), CloudChange(keys: ["big"], reason: .quotaViolation)
            ])
    }

    @Test func theAsynchronousSequenceDeliversTheSameChanges() async throws {
        let store = CloudKeyValueStore.inMemory()
        var iterator = store.changes(keys: ["a", "b"], scope: .allProcesses).makeAsyncIterator()
        store.set(Int64(1), forKey: "a")
        try store.simulateExternalChange(["b": .integer(2)])
        #expect(await iterator.next() == DefaultsChange(keys: ["a"], origin: .thisProcess))
        #expect(await iterator.next() == DefaultsChange(keys: ["b"], origin: .outside))
    }

    @Test func aCancelledObservationHearsNothingMore() {
        let store = CloudKeyValueStore.inMemory()
        let heard = ChangeRecorder()
        let observation = store.observe(scope: .allProcesses) { heard.record($0) }
        store.set(Int64(1), forKey: "a")
        store.settle()
        observation.cancel()
        store.set(Int64(2), forKey: "a")
        try? store.simulateExternalChange(["b": .integer(2)])
        store.settle()
        #expect(heard.changes == [DefaultsChange(keys: ["a"], origin: .thisProcess)])
    }
}

/// The same scopes across machines, against a real etcd node.
@Suite(.serialized, EtcdCluster.required) struct EtcdObservationScopeTests {
    let directory = TemporaryDirectory()

    @Test func anotherMachinesWriteIsOutsideAndNeverHeardByThisProcessScope() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let here = ChangeRecorder(), everywhere = ChangeRecorder()
        let observations = [
            b.observe(scope: .thisProcess) { here.record($0) },
            b.observe(scope: .allProcesses) { everywhere.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        a.set("example.org", forKey: "host")
        #expect(a.synchronize())
        #expect(everywhere.waitFor(key: "host"))
        b.set(true, forKey: "marker")
        #expect(here.waitFor(key: "marker") && everywhere.waitFor(key: "marker"))
        #expect(
            everywhere.changes == [
                DefaultsChange(keys: ["host"], origin: .outside), DefaultsChange(keys: ["marker"], origin: .thisProcess)
            ])
        #expect(here.changes == [DefaultsChange(keys: ["marker"], origin: .thisProcess)])
        // An atomic update and a batch through this store are this process's writes, one change per key.
        here.clear()
        try b.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 }
        b.performBatchUpdates {
            b.set("db", forKey: "host")
            b.set(Int64(5432), forKey: "port")
        }
        b.set(true, forKey: "marker2")
        #expect(here.waitFor(key: "marker2"))
        #expect(
            here.changes == [
                DefaultsChange(keys: ["count"], origin: .thisProcess),
                DefaultsChange(keys: ["host"], origin: .thisProcess),
                DefaultsChange(keys: ["port"], origin: .thisProcess),
                DefaultsChange(keys: ["marker2"], origin: .thisProcess)
            ])
    }
}
