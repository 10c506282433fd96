import Foundation
import Testing
import TestSupport
@testable import ObservableDefaults

/// `update(forKey:_:)`, `performBatchUpdates(_:)` and the generated `update(_:_:)` without a server: the
/// development and local-only stores, and `@ObservableCloud` objects on them.
@Suite struct CloudUpdateTests {
    let directory = TemporaryDirectory()

    @Test func theDevelopmentStoreUpdatesInMemoryAndRefusesWhatItCannotStore() throws {
        let store = CloudKeyValueStore.development
        let key = uniqueCloudPrefix() + "n"
        #expect(try store.update(Int.self, forKey: key) { ($0 ?? 0) + 1 } == 1)
        #expect(try store.update(Int.self, forKey: key) { ($0 ?? 0) + 1 } == 2)
        #expect(store.longLong(forKey: key) == 2)
        #expect(try store.update(forKey: key) { _ in nil } == nil)
        #expect(store.value(forKey: key) == nil)
        #expect(throws: DefaultsError.self) { try store.update(forKey: key) { _ in .double(.infinity) } }
        #expect(store.value(forKey: key) == nil)
        #expect(throws: DefaultsError.self) { try store.update(forKey: ".observable-defaults/n") { _ in .integer(1) } }
        store.set(1, forKey: ".observable-defaults/n")  // refused, reported on the error channel
        #expect(store.value(forKey: ".observable-defaults/n") == nil)
    }

    @Test func anUpdatePastTheLimitsChangesNothingAndIsAQuotaViolation() throws {
        let store = CloudKeyValueStore(
            mode: .development, configuration: nil, state: CloudState(), localCopy: nil,
            limits: CloudLimits(maximumTotalBytes: 10))
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(throws: DefaultsError.self) {
            try store.update(forKey: "big") { _ in .string(String(repeating: "x", count: 20)) }
        }
        #expect(store.value(forKey: "big") == nil)
        store.settle()
        #expect(recorder.changes == [CloudChange(keys: ["big"], reason: .quotaViolation)])
    }

    @Test func aTransformRunsAgainWhenTheKeyChangedWhileItRan() throws {
        let store = CloudKeyValueStore(
            mode: .development, configuration: nil, state: CloudState(), localCopy: nil, limits: .iCloud)
        store.set(Int64(1), forKey: "n")
        let runs = Locked(0)
        let stored = try store.update(Int.self, forKey: "n") { current in
            let run = runs.withLock {
                $0 += 1; return $0
            }
            if run == 1 { store.set(Int64(10), forKey: "n") }  // another writer slips in while it runs
            return (current ?? 0) + 1
        }
        #expect(stored == 11)
        #expect(runs.withLock { $0 } == 2)
        #expect(store.longLong(forKey: "n") == 11)
    }

    @Test func manyThreadsUpdatingOneKeyLoseNothing() throws {
        let store = CloudKeyValueStore(
            mode: .development, configuration: nil, state: CloudState(), localCopy: nil, limits: .iCloud)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<250 { _ = try? store.update(Int.self, forKey: "n") { ($0 ?? 0) + 1 } }
        }
        #expect(store.longLong(forKey: "n") == 2_000)
    }

    @Test func theLocalOnlyStoreKeepsAnUpdateInItsFile() throws {
        do {
            let store = CloudKeyValueStore.localOnly(directory: directory.url)
            try store.update(Int.self, forKey: "launches") { ($0 ?? 0) + 1 }
            try store.update(Int.self, forKey: "launches") { ($0 ?? 0) + 1 }
            store.performBatchUpdates {
                store.set("a", forKey: "x")
                store.performBatchUpdates { store.set("b", forKey: "y") }
            }
        }
        let reopened = CloudKeyValueStore.localOnly(directory: directory.url)
        #expect(reopened.longLong(forKey: "launches") == 2)
        #expect(reopened.string(forKey: "x") == "a" && reopened.string(forKey: "y") == "b")
    }

    @Test func theGeneratedUpdateChangesThePropertyOnceAndReachesOtherObjects() throws {
        let prefix = uniqueCloudPrefix()
        let store = CloudKeyValueStore.development
        let fleet = CloudFleet(prefix: prefix, store: store)
        let other = CloudFleet(prefix: prefix, store: store)
        let flags = FleetFlags(fleet)
        let otherFlag = track { _ = other.workers }

        #expect(try fleet.update(\.workers) { $0 + 1 } == 5)  // the declaration default, 4, plus one
        #expect(fleet.workers == 5)
        #expect(flags.fired == ["workers"])
        #expect(flags.flags["workers"]?.count == 1)
        store.settle()
        #expect(other.workers == 5)
        #expect(otherFlag.fired)
        #expect(store.longLong(forKey: prefix + "workers") == 5)

        // willSet and didSet run once; an unchanged result notifies nobody.
        try fleet.update(\.hosts) { $0 + ["a"] }
        #expect(fleet.events.events == ["willSet [\"a\"]", "didSet [] -> [\"a\"]"])
        let unchanged = track { _ = fleet.workers }
        #expect(try fleet.update(\.workers) { $0 } == 5)
        #expect(!unchanged.fired)

        // Optional nil removes the key; a Codable value goes through its structure.
        try fleet.update(\.limit) { _ in 2.5 }
        #expect(store.double(forKey: prefix + "limit") == 2.5)
        try fleet.update(\.limit) { _ in nil }
        #expect(store.value(forKey: prefix + "limit") == nil)
        try fleet.update(\.endpoint) { CloudEndpoint(host: $0.host, port: $0.port + 1) }
        #expect(fleet.endpoint.port == 81)

        // A transform that throws, a key holding another type, a property that is not persisted.
        struct Refused: Error {}
        #expect(throws: Refused.self) { try fleet.update(\.workers) { _ in throw Refused() } }
        #expect(fleet.workers == 5)
        store.set("not a number", forKey: prefix + "workers")
        #expect(throws: DefaultsError.self) { try fleet.update(\.workers) { $0 + 1 } }
        #expect(throws: DefaultsError.self) { try fleet.update(\.lastSeen) { $0 + 1 } }
    }

    @Test func theGeneratedBatchForwardsToTheStore() throws {
        let prefix = uniqueCloudPrefix()
        let store = CloudKeyValueStore.development
        let fleet = CloudFleet(prefix: prefix, store: store)
        let result = fleet.performBatchUpdates {
            fleet.workers = 9
            fleet.logLevel = "debug"
            return store.core.state.withLock { $0.openBatch != nil }
        }
        #expect(result)
        #expect(store.core.state.withLock { $0.openBatch == nil && $0.batchDepth == 0 })
        #expect(
            store.longLong(forKey: prefix + "workers") == 9 && store.string(forKey: prefix + "log-level") == "debug")
    }
}
