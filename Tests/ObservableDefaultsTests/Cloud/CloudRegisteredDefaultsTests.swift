import Foundation
import Testing
import TestSupport
@testable import ObservableDefaults

/// `CloudKeyValueStore.register(defaults:)`: fallback values as a suite's, read by the store's getters and by
/// `@ObservableCloud` properties, never uploaded.
@Suite struct CloudRegisteredDefaultsTests {
    @Test func aRegisteredDefaultShowsThroughUntilAValueIsStored() {
        let store = CloudKeyValueStore.inMemory()
        store.register(defaults: ["level": .integer(1), "name": .string("n")])
        #expect(store.value(forKey: "level") == .integer(1) && store.storedValue(forKey: "level") == nil)
        #expect(store.longLong(forKey: "level") == 1 && store.string(forKey: "name") == "n")
        #expect(store.values() == ["level": .integer(1), "name": .string("n")])
        #expect(store.registeredDefaults == ["level": .integer(1), "name": .string("n")])
        store.set(Int64(2), forKey: "level")
        #expect(store.longLong(forKey: "level") == 2 && store.values()["level"] == .integer(2))
        store.removeObject(forKey: "level")
        #expect(store.longLong(forKey: "level") == 1)
        // A stored value of another type does not hide a usable default.
        store.set("many", forKey: "level")
        #expect(store.value(Int.self, forKey: "level") == 1 && store.value(forKey: "level") == .string("many"))
        #expect(!store.hasPendingChanges)
    }

    @Test func objectsReadRegisteredDefaultsBeforeTheirDeclarationsAndHearNewOnes() {
        let store = CloudKeyValueStore.inMemory()
        let prefix = uniqueCloudPrefix()
        store.register(defaults: [prefix + "workers": .integer(7), prefix + "limit": .double(1.5)])
        let fleet = CloudFleet(prefix: prefix, store: store)
        #expect(fleet.workers == 7 && fleet.limit == 1.5 && fleet.logLevel == "info")

        // nil removes the key: the property reads the registered default, not its declaration's nil.
        fleet.limit = 3
        fleet.limit = nil
        #expect(fleet.limit == 1.5 && store.storedValue(forKey: prefix + "limit") == nil)

        // A new default changes what an unstored key reads: its property (only) is told.
        let flags = FleetFlags(fleet)
        store.register(defaults: [prefix + "workers": .integer(9)])
        store.settle()
        #expect(fleet.workers == 9 && flags.fired == ["workers"])

        // Under a stored value a new default changes nothing, and nobody is told.
        fleet.logLevel = "debug"
        let quiet = FleetFlags(fleet)
        store.register(defaults: [prefix + "log-level": .string("warning"), prefix + "workers": .integer(9)])
        store.settle()
        #expect(fleet.logLevel == "debug" && quiet.fired.isEmpty)
    }

    @Test func unsupportedFoundationObjectsAreSkippedAndReported() {
        let store = CloudKeyValueStore.inMemory()
        let errors = Locked<[DefaultsError]>([])
        let observation = store.observeErrors { error in errors.withLock { $0.append(error) } }
        defer { observation.cancel() }
        store.register(defaults: ["ok": 3, "odd": NSObject()])
        store.settle()
        #expect(store.longLong(forKey: "ok") == 3 && store.value(forKey: "odd") == nil)
        let reported = errors.withLock { $0 }
        #expect(reported.count == 1 && reported.first?.key == "odd" && reported.first?.kind == .unsupportedValue)
    }
}
