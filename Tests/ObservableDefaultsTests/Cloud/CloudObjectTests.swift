import Foundation
import Observation
import Testing
@testable import ObservableDefaults
import TestSupport

/// `@ObservableCloud` objects (the classes in CloudModels.swift) on the shared development store (given as `store:`) and a
/// local-only store: loading, writes, changes from elsewhere and from this process, refusals, lifetime.
@Suite struct CloudObjectTests {
    let store = CloudKeyValueStore.development

    @Test func eachPropertyIsObservableAndOnlyTheAssignedOneNotifies() {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        #expect(fleet.storeInUse === store)
        #expect(fleet.workers == 4 && fleet.logLevel == "info" && fleet.limit == nil && fleet.hosts == [])

        let assignments: [(String, (CloudFleet) -> Void)] = [
            ("workers", { $0.workers = 8 }), ("logLevel", { $0.logLevel = "debug" }), ("limit", { $0.limit = 1.5 }),
            ("hosts", { $0.hosts = ["a"] }), ("endpoint", { $0.endpoint = CloudEndpoint(host: "h", port: 1) }),
            ("lastSeen", { $0.lastSeen = 3 })
        ]
        for (name, assign) in assignments {
            let flags = FleetFlags(fleet)
            assign(fleet)
            store.settle()
            #expect(flags.fired == [name], "assigning \(name)")
        }
        #expect(store.value(forKey: prefix + "workers") == .integer(8))
        #expect(store.value(forKey: prefix + "log-level") == .string("debug"))
        #expect(store.value(forKey: prefix + "limit") == .double(1.5))
        #expect(store.value(forKey: prefix + "hosts") == .array([.string("a")]))
        #expect(store.value(forKey: prefix + "endpoint") == .dictionary(["host": .string("h"), "port": .integer(1)]))
        #expect(store.value(forKey: prefix + "lastSeen") == nil)  // @ObservableOnly: not stored
        #expect(store.value(forKey: prefix + "scratch") == nil)  // @Ignore
        #expect(fleet.events.events == ["willSet [\"a\"]", "didSet [] -> [\"a\"]"])

        // A new object reads what the store holds.
        let other = CloudFleet(prefix: prefix, store: store)
        #expect(other.workers == 8 && other.logLevel == "debug" && other.limit == 1.5 && other.hosts == ["a"])
        #expect(other.endpoint == CloudEndpoint(host: "h", port: 1) && other.lastSeen == 0)
    }

    @Test func assigningTheCurrentValueNotifiesNobody() {
        let fleet = CloudFleet(prefix: uniqueCloudPrefix(), store: store)
        fleet.workers = 6
        fleet.hosts = ["x"]
        let flags = FleetFlags(fleet)
        let eventsBefore = fleet.events.events
        fleet.workers = 6
        fleet.hosts = ["x"]
        fleet.lastSeen = 0
        fleet.endpoint = CloudEndpoint(host: "localhost", port: 80)  // the default, not stored yet
        store.settle()
        #expect(flags.fired.isEmpty)
        #expect(fleet.events.events == eventsBefore)
    }

    @Test func anOptionalSetToNilRemovesTheKeyAndReadsTheDeclarationDefault() {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        fleet.limit = 2.5
        #expect(store.value(forKey: prefix + "limit") == .double(2.5))
        var flags = FleetFlags(fleet)
        fleet.limit = nil
        store.settle()
        #expect(flags.fired == ["limit"])
        #expect(fleet.limit == nil && store.value(forKey: prefix + "limit") == nil)
        flags = FleetFlags(fleet)
        fleet.limit = 3
        store.settle()
        #expect(flags.fired == ["limit"])
        #expect(fleet.limit == 3 && store.value(forKey: prefix + "limit") == .double(3))
    }

    @Test(arguments: [CloudChangeReason.serverChange, .initialSync, .accountChange])
    func changesFromElsewhereNotifyExactlyTheChangedProperties(reason: CloudChangeReason) throws {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        fleet.logLevel = "warn"
        let flags = FleetFlags(fleet)
        try store.simulateExternalChange(
            [
                prefix + "workers": .integer(12), prefix + "hosts": .array([.string("b"), .string("c")]),
                prefix + "log-level": .string("warn"),  // unchanged: nobody hears it
                prefix + "unrelated": .integer(1), "elsewhere": .integer(2)
            ], reason: reason)
        store.settle()
        #expect(flags.fired == ["workers", "hosts"])
        #expect(fleet.workers == 12 && fleet.hosts == ["b", "c"] && fleet.logLevel == "warn")
        #expect(fleet.events.events.suffix(2) == ["willSet [\"b\", \"c\"]", "didSet [] -> [\"b\", \"c\"]"])

        // A removal from elsewhere: the declaration default, told as a change.
        let again = FleetFlags(fleet)
        try store.simulateExternalChange([prefix + "workers": nil], reason: reason)
        store.settle()
        #expect(again.fired == ["workers"] && fleet.workers == 4)
    }

    @Test func aQuotaViolationAnnouncementChangesNoProperty() throws {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        fleet.workers = 5
        let flags = FleetFlags(fleet)
        try store.simulateExternalChange([prefix + "workers": .integer(99)], reason: .quotaViolation)
        store.settle()
        #expect(flags.fired.isEmpty && fleet.workers == 5)
    }

    @Test func aCodableStructFollowsItsStoredStructure() throws {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        let flags = FleetFlags(fleet)
        try store.simulateExternalChange([
            prefix + "endpoint": .dictionary(["host": .string("db"), "port": .integer(5432)])
        ])
        store.settle()
        #expect(flags.fired == ["endpoint"])
        #expect(fleet.endpoint == CloudEndpoint(host: "db", port: 5432))
    }

    @Test func twoObjectsOnOneStoreFollowEachOthersWritesAndWritesFromCode() {
        let prefix = uniqueCloudPrefix()
        let a = CloudFleet(prefix: prefix, store: store)
        let b = CloudFleet(prefix: prefix, store: store)
        let heardOutside = CloudRecorder()
        let observation = store.observe(prefix: prefix) { heardOutside.record($0) }
        defer { observation.cancel() }

        var flagsA = FleetFlags(a), flagsB = FleetFlags(b)
        a.workers = 7
        store.settle()
        #expect(b.workers == 7)
        #expect(flagsA.fired == ["workers"] && flagsA.flags["workers"]?.count == 1)  // its own write, once
        #expect(flagsB.fired == ["workers"])

        flagsA = FleetFlags(a)
        flagsB = FleetFlags(b)
        b.hosts = ["z"]
        store.settle()
        #expect(a.hosts == ["z"] && flagsA.fired == ["hosts"] && flagsB.fired == ["hosts"])
        #expect(a.events.events == ["willSet [\"z\"]", "didSet [] -> [\"z\"]"])

        flagsA = FleetFlags(a)
        flagsB = FleetFlags(b)
        store.set(.string("error"), forKey: prefix + "log-level")
        store.settle()
        #expect(a.logLevel == "error" && b.logLevel == "error")
        #expect(flagsA.fired == ["logLevel"] && flagsB.fired == ["logLevel"])
        // The store's public observers hear changes from elsewhere only (iCloud's rule), not these writes.
        #expect(heardOutside.changes.isEmpty)
    }

    @Test func aWritePastTheLimitsLeavesPropertyAndStoreUnchangedAndIsReported() {
        let directory = TemporaryDirectory()
        let limits = CloudLimits(
            maximumKeyCount: 10, maximumTotalBytes: 1000, maximumValueBytes: 20, maximumKeyBytes: 64)
        let local = CloudKeyValueStore.localOnly(directory: directory.url, limits: limits)
        let errors = ErrorRecorder(), heard = CloudRecorder()
        let observations = [local.observeErrors { errors.record($0) }, local.observe { heard.record($0) }]
        defer { observations.forEach { $0.cancel() } }
        let fleet = CloudFleet(prefix: "q_", store: local)
        fleet.logLevel = "short"
        let flags = FleetFlags(fleet)

        fleet.logLevel = String(repeating: "x", count: 40)
        fleet.hosts = Array(repeating: "host", count: 10)
        local.settle()
        #expect(flags.fired.isEmpty)
        #expect(fleet.logLevel == "short" && fleet.hosts == [])
        #expect(local.values() == ["q_log-level": .string("short")])
        #expect(fleet.events.events.isEmpty)
        #expect(errors.waitFor("q_log-level") && errors.waitFor("q_hosts"))
        #expect(errors.errors.contains { $0.description.contains("over the cloud store's limits") })
        #expect(
            heard.changes == [
                CloudChange(keys: ["q_log-level"], reason: .quotaViolation),
                CloudChange(keys: ["q_hosts"], reason: .quotaViolation)
            ])
    }

    @Test func aValueThatCannotBeStoredIsReportedAndChangesNothing() {
        let prefix = uniqueCloudPrefix()
        let fleet = CloudFleet(prefix: prefix, store: store)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        fleet.limit = 1
        let flags = FleetFlags(fleet)
        fleet.limit = .nan
        store.settle()
        #expect(flags.fired.isEmpty && fleet.limit == 1 && store.value(forKey: prefix + "limit") == .double(1))
        #expect(errors.waitFor(prefix + "limit"))
    }

    @Test func aValueOfTheWrongTypeKeepsTheLastGoodValueAndIsReported() throws {
        let prefix = uniqueCloudPrefix()
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        let fleet = CloudFleet(prefix: prefix, store: store)
        fleet.workers = 9
        let flags = FleetFlags(fleet)
        try store.simulateExternalChange([prefix + "workers": .string("many")])
        store.settle()
        #expect(flags.fired.isEmpty && fleet.workers == 9)
        #expect(errors.waitFor("\"many\" is not an Int; keeping the current value"))
        #expect(errors.errors.contains { $0.key == prefix + "workers" && $0.kind == .wrongType })

        // A new object uses the declaration default.
        let newcomer = CloudFleet(prefix: prefix, store: store)
        #expect(newcomer.workers == 4)
        #expect(errors.waitFor("\"many\" is not an Int; using the default"))
    }

    @Test func aCustomInitializerSetsPrefixSyncAndStoreAndStartsObserving() {
        let directory = TemporaryDirectory()
        let local = CloudKeyValueStore.localOnly(directory: directory.url)
        let model = CloudCustomInitModel(store: local, prefix: "x_")
        #expect(model.configuration.prefix == "x_" && model.configuration.syncImmediately)
        #expect(model.configuration.store === local && !model._developmentMode_)
        model.volume = 11
        #expect(local.value(forKey: "x_volume") == .integer(11))
        let flag = track { _ = model.volume }
        local.set(.integer(3), forKey: "x_volume")
        local.settle()
        #expect(flag.fired && model.volume == 3)
        // Values survive in the local copy: a new object (as a restarted process) reads them. The copy is
        // written in the background; synchronize() (like the process's exit) waits for it.
        local.synchronize()
        #expect(
            CloudCustomInitModel(store: CloudKeyValueStore.localOnly(directory: directory.url), prefix: "x_").volume
                == 3)
    }

    @Test func releasingTheObserverStopsUpdatesAndTheObjectDeallocates() throws {
        let prefix = uniqueCloudPrefix()
        let kept = CloudFleet(prefix: prefix, store: store)
        kept.stopObserving()
        let flags = FleetFlags(kept)
        weak var released: CloudFleet?
        do {
            let fleet = CloudFleet(prefix: prefix, store: store)
            fleet.workers = 2
            released = fleet
        }
        #expect(released == nil)  // no retain cycle through the store
        try store.simulateExternalChange([prefix + "workers": .integer(30)])
        store.settle()
        #expect(flags.fired.isEmpty && kept.workers == 4)  // neither the other object's write nor the outside change
        // Its own writes still work.
        kept.workers = 5
        #expect(store.value(forKey: prefix + "workers") == .integer(5))
    }

    @MainActor @Test func aMainActorClassGetsChangesFromElsewhereOnTheMainActor() async throws {
        let prefix = uniqueCloudPrefix()
        let model = CloudMainActorModel(prefix: prefix, store: store)
        let size = track { _ = model.size }, theme = track { _ = model.theme }
        let store = store
        // From another thread, as a sync thread would.
        try await Task.detached { try store.simulateExternalChange([prefix + "size": .integer(20)]) }.value
        #expect(await eventually { model.size == 20 })
        store.settle()
        #expect(size.firedOnMain == [true] && !theme.fired)
        #expect(model.events.events == ["didSet 12 -> 20 on main: true"])
    }

    @Test func developmentModeIsTheFlagOrTheEnvironment() {
        let dev = ["OBSERVABLE_DEFAULTS_DEV_MODE": "true"], previews = ["XCODE_RUNNING_FOR_PREVIEWS": "1"]
        let directory = TemporaryDirectory()  // held to the end: it is removed when released
        let local = CloudKeyValueStore.localOnly(directory: directory.url)
        #expect(
            _CloudObjectBinding.storeChoice(explicit: nil, developmentMode: false, environment: dev) == .development)
        #expect(
            _CloudObjectBinding.storeChoice(explicit: nil, developmentMode: false, environment: previews)
                == .development)
        #expect(_CloudObjectBinding.storeChoice(explicit: nil, developmentMode: true, environment: [:]) == .development)
        #expect(_CloudObjectBinding.storeChoice(explicit: nil, developmentMode: false, environment: [:]) == .default)
        #expect(
            _CloudObjectBinding.storeChoice(
                explicit: nil, developmentMode: false, environment: ["OBSERVABLE_DEFAULTS_DEV_MODE": "1"]) == .default)
        #expect(
            _CloudObjectBinding.storeChoice(explicit: local, developmentMode: true, environment: dev)
                == .explicit(local))
        #expect(_CloudObjectBinding.isDevelopmentMode(requested: false, environment: dev))
        #expect(!_CloudObjectBinding.isDevelopmentMode(requested: false, environment: [:]))
        #expect(CloudFleet(prefix: uniqueCloudPrefix(), developmentMode: true)._developmentMode_)

        // The environment's switch gives each object a store of its own, as the flag does.
        var first = _CloudObjectBinding.State(prefix: "", syncImmediately: false, developmentMode: false)
        var second = first
        let firstStore = _CloudObjectBinding.chosenStore(&first, environment: previews)
        #expect(_CloudObjectBinding.chosenStore(&first, environment: previews) === firstStore)
        #expect(_CloudObjectBinding.chosenStore(&second, environment: dev) !== firstStore)
        #expect(firstStore !== CloudKeyValueStore.development && firstStore.mode == .development)
    }

    @Test func developmentModeKeepsEachObjectsValuesInTheObject() throws {
        let prefix = uniqueCloudPrefix()
        let a = CloudFleet(prefix: prefix, developmentMode: true)
        let b = CloudFleet(prefix: prefix, developmentMode: true)
        #expect(a.storeInUse !== b.storeInUse && a.storeInUse !== store && a.storeInUse.mode == .development)
        let flagsA = FleetFlags(a), flagsB = FleetFlags(b)
        a.workers = 8
        a.hosts = ["x"]
        a.storeInUse.settle()
        #expect(flagsA.fired == ["workers", "hosts"] && flagsB.fired.isEmpty)
        #expect(b.workers == 4 && b.hosts == [] && store.value(forKey: prefix + "workers") == nil)
        #expect(CloudFleet(prefix: prefix, developmentMode: true).workers == 4)  // a fresh object: the declarations

        // The object's own store plays the other machines for that object only.
        let flagsA2 = FleetFlags(a), flagsB2 = FleetFlags(b)
        try a.storeInUse.simulateExternalChange([prefix + "log-level": .string("debug")])
        a.storeInUse.settle()
        #expect(a.logLevel == "debug" && b.logLevel == "info")
        #expect(flagsA2.fired == ["logLevel"] && flagsB2.fired.isEmpty)

        // Sharing is asked for by naming the shared store.
        let c = CloudFleet(prefix: prefix, store: .development), d = CloudFleet(prefix: prefix, store: .development)
        c.workers = 12
        store.settle()
        #expect(d.workers == 12 && a.workers == 8)
    }

    @Test func theStoreIsFixedOnceTheObjectStarted() {
        let directory = TemporaryDirectory()
        let first = CloudKeyValueStore.localOnly(directory: directory.file("1"))
        let second = CloudKeyValueStore.localOnly(directory: directory.file("2"))
        let binding = _CloudObjectBinding(prefix: "", syncImmediately: false, developmentMode: false, mainActor: false)
        binding.configure(store: first)
        #expect(binding.store === first)
        binding.configure(store: second)  // before start: the last one wins
        #expect(binding.store === second)
        _ = binding.start(_CloudPropertyList())
        binding.configure(store: first)
        #expect(binding.store === second)
    }

    @Test func thePortingTypesNameTheStoreAndItsValues() {
        let directory = TemporaryDirectory()
        let store: any ObservableDefaultsCloudStoreProtocol = CloudKeyValueStore.localOnly(directory: directory.url)
        store.set(Int64(3), forKey: "n")
        store.set("text", forKey: "s")
        store.set(["a": 1] as [String: Any], forKey: "d")
        #expect(store.longLong(forKey: "n") == 3 && store.string(forKey: "s") == "text")
        #expect(store.dictionary(forKey: "d")?["a"] as? Int == 1)
        store.removeObject(forKey: "s")
        #expect(store.object(forKey: "s") == nil && store.dictionaryRepresentation.count == 2 && store.synchronize())
        func isCloudValue<T: CloudPropertyListValue>(_: T.Type) -> Bool { true }
        #expect(isCloudValue([String: [Date]].self) && isCloudValue(Int?.self) && isCloudValue(Data.self))
        let codable: any CodableCloudPropertyListValue = CloudEndpoint(host: "h", port: 1)
        #expect(codable is CloudEndpoint)
    }

    @Test func syncImmediatelyEndsABackOffWithoutBlockingTheCaller() {
        let control = EtcdSyncControl()
        defer { control.stop() }  // ends the back-off should the test fail
        let ended = Locked(false)
        // A plain wake does not end a back-off: not even one pending when the back-off begins. The sleeper
        // checks what ends its back-off under the control's lock before it waits, so once it is seen
        // sleeping it has found the pending wake not to be one of those things.
        control.wake()
        let thread = Thread {
            control.sleep(3600, after: control.beginRound())
            ended.withLock { $0 = true }
        }
        thread.start()
        #expect(eventually { control.isSleeping })
        #expect(!ended.withLock { $0 })
        // wakeNow does, long before the hour is over.
        control.wakeNow()
        #expect(eventually(timeout: .seconds(30)) { ended.withLock { $0 } })
    }

    /// A write wakes the sync thread once: an object's with `syncImmediately: true` also ends the back-off
    /// in that wake-up, another's does not.
    @Test func theWriteOfASyncImmediatelyObjectEndsABackOffInItsOneWakeUp() {
        let control = EtcdSyncControl()
        defer { control.stop() }
        let ended = Locked(false)
        let thread = Thread {
            control.sleep(3600, after: control.beginRound())
            ended.withLock { $0 = true }
        }
        thread.start()
        #expect(eventually { control.isSleeping })
        // Not waiting for work: neither write hands its local-copy save to the sync thread.
        #expect(!control.wakeTakingSave())
        #expect(!ended.withLock { $0 } && control.isSleeping)
        #expect(!control.wakeTakingSave(cuttingBackOff: true))
        #expect(eventually(timeout: .seconds(30)) { ended.withLock { $0 } })
    }
}
