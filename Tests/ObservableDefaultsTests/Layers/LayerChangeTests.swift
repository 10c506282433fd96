import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Writes act on the file alone; a change in any layer reaches observers only when it changes the
/// effective value, and says which layer it came from.
@Suite struct LayerChangeTests {
    let layers = LayerFixture()

    @Test func aWriteToAForcedKeyChangesNoFileAndIsReported() throws {
        try layers.write(#"{"mode": "locked"}"#, "forced", in: layers.managed)
        let suite = try layers.suite("forced")
        let errors = ErrorRecorder()
        let changes = ChangeRecorder()
        let observations = [
            suite.observeErrors { errors.record($0) }, suite.observe(scope: .thisProcess) { changes.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        suite.set("open", forKey: "mode")
        suite.removeObject(forKey: "mode")
        suite.storage.apply([ExactKey("mode"): .string("x"), ExactKey("bag"): .integer(1)])
        #expect(throws: DefaultsError.self) { try suite.update(forKey: "mode") { _ in .string("open") } }
        suite.set("marker", forKey: "marker")

        #expect(suite.value(forKey: "mode") == .string("locked"))
        #expect(suite.storedValue(forKey: "mode") == nil)
        #expect(!layers.fileText("forced").contains("mode\""))
        let refused = errors.items.filter { $0.kind == .forcedKey }
        #expect(refused.count == 4, "set, remove and update are each refused and reported: \(errors.items)")
        #expect(refused.allSatisfy { $0.key == "mode" && $0.message.contains(layers.managed.path) })
        #expect(changes.changes(before: "marker").map(\.keys) == [["bag"]])
    }

    @Test func aFileChangeThatLeavesTheEffectiveValueAloneNotifiesNobody() throws {
        try layers.write(#"{"depth": 3}"#, "same", in: layers.system[0])
        let suite = try layers.suite("same", layers: [.managed, .file, .system])
        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }

        suite.set(3, forKey: "depth")  // the file now holds what the system layer gave: nothing changes
        suite.removeObject(forKey: "depth")  // and again
        suite.set("marker", forKey: "marker")
        #expect(changes.changes(before: "marker").isEmpty, "\(changes.changes)")
        suite.set(4, forKey: "depth")
        #expect(changes.changes.last == DefaultsChange(keys: ["depth"], origin: .thisProcess))
        #expect(suite.value(forKey: "depth") == .integer(4))
    }

    @Test func aLowerLayerEditReachesObserversWithItsLayer() throws {
        let system = try layers.write(#"{"port": 80}"#, "live", in: layers.system[0])
        let suite = try layers.suite("live")
        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }

        try HandEdit.renameOver(system, #"{"port": 81}"#)
        #expect(eventually { suite.value(forKey: "port") == .integer(81) })
        #expect(changes.waitFor(key: "port"))
        #expect(changes.changes.first == DefaultsChange(keys: ["port"], origin: .outside, layer: .system(system)))

        // The file now holds the key: the system file's edits are hidden.
        suite.set(9000, forKey: "port")
        changes.clear()
        try HandEdit.truncateAndWrite(system, #"{"port": 82, "marker": 1}"#)
        #expect(changes.waitFor(key: "marker"))
        #expect(changes.changes(before: "marker").isEmpty, "\(changes.changes)")
        #expect(suite.value(forKey: "port") == .integer(9000))

        // Removing the file's value shows the system file's again, told as this process's change.
        changes.clear()
        suite.removeObject(forKey: "port")
        #expect(changes.changes == [DefaultsChange(keys: ["port"], origin: .thisProcess)])
        #expect(suite.value(forKey: "port") == .integer(82))
        #expect(suite.origin(forKey: "port") == .system(system))
    }

    @Test func aHandEditOfTheFileUnderAForcedKeyNotifiesNobody() throws {
        try layers.write(#"{"mode": "locked"}"#, "hidden", in: layers.managed)
        let suite = try layers.suite("hidden")
        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }
        try layers.write(#"{"mode": "edited", "marker": 1}"#, "hidden", in: layers.suites)
        #expect(changes.waitFor(key: "marker"))
        #expect(changes.changes(before: "marker").isEmpty)
        #expect(suite.storedValue(forKey: "mode") == .string("edited"))
        #expect(suite.value(forKey: "mode") == .string("locked"))
    }

    @Test func managedFilesComeGoAndComeBackLive() throws {
        let suite = try layers.suite("admin")
        suite.set("mine", forKey: "mode")
        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }

        let managed = try layers.write(#"{"mode": "locked"}"#, "admin", in: layers.managed)
        #expect(eventually { suite.objectIsForced(forKey: "mode") })
        #expect(changes.waitFor(key: "mode"))
        #expect(changes.changes.first?.layer == .managed(managed))
        #expect(suite.value(forKey: "mode") == .string("locked"))

        changes.clear()
        try FileManager.default.removeItem(at: managed)
        #expect(eventually { !suite.objectIsForced(forKey: "mode") })
        #expect(changes.waitFor(key: "mode"))
        #expect(suite.value(forKey: "mode") == .string("mine"))

        // The directory itself removed and made again.
        try FileManager.default.removeItem(at: layers.managed)
        try FileManager.default.createDirectory(at: layers.managed, withIntermediateDirectories: true)
        try layers.write(#"{"mode": "again"}"#, "admin", in: layers.managed)
        #expect(eventually { suite.value(forKey: "mode") == .string("again") })
    }

    @Test func aBrokenLayerFileIsReportedWithItsPositionAndKeepsItsLastGoodValues() throws {
        let system = try layers.write(#"{"port": 80, "host": "a"}"#, "broken", in: layers.system[0])
        try layers.write(#"{"other": 1}"#, "broken", in: layers.system[1])
        let suite = try layers.suite("broken")
        let events = ErrorEventRecorder()
        let changes = ChangeRecorder()
        let observations = [
            suite.observeErrorEvents { events.record($0) }, suite.observe(scope: .allProcesses) { changes.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        try HandEdit.renameOver(system, "{\n  \"port\": 81,\n  \"host\": \n}")
        #expect(eventually { events.items.contains { $0.error.kind == .malformedFile } })
        let error = try #require(events.items.first { $0.error.kind == .malformedFile }?.error)
        #expect(error.fileURL == system && error.line == 4 && error.column != nil)
        #expect(suite.value(forKey: "port") == .integer(80) && suite.value(forKey: "host") == .string("a"))
        #expect(suite.value(forKey: "other") == .integer(1), "the other layers keep working")
        #expect(suite.currentErrors.contains(error))

        try layers.write(#"{"other": 2}"#, "broken", in: layers.system[1])
        #expect(eventually { suite.value(forKey: "other") == .integer(2) })

        try HandEdit.renameOver(system, #"{"port": 81, "host": "a"}"#)
        #expect(eventually { suite.value(forKey: "port") == .integer(81) })
        #expect(eventually { events.items.contains(.recovered(error)) })
        #expect(suite.currentErrors.isEmpty)
    }

    @Test func brokenManagedAndGlobalFilesKeepTheirLastGoodValuesAndNoLayerFileIsWritten() throws {
        let managed = try layers.write(#"{"mode": "locked"}"#, "every", in: layers.managed)
        let system = try layers.write(#"{"port": 80, "mode": "shipped"}"#, "every", in: layers.system[0])
        let global = try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        let suite = try layers.suite("every")
        let events = ErrorEventRecorder()
        let changes = ChangeRecorder()
        let observations = [
            suite.observeErrorEvents { events.record($0) }, suite.observe(scope: .allProcesses) { changes.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        try HandEdit.renameOver(managed, "{\n  \"mode\": \n}")
        try HandEdit.renameOver(global, #"{"locale": fr}"#)
        #expect(eventually { events.items.filter { $0.error.kind == .malformedFile }.count == 2 }, "\(events.items)")
        let broken = events.items.map(\.error).filter { $0.kind == .malformedFile }
        let managedError = try #require(broken.first { $0.fileURL == managed })
        #expect(managedError.line == 3 && managedError.column != nil, "\(managedError)")
        let globalError = try #require(broken.first { $0.fileURL == global })
        #expect(globalError.line == 1 && globalError.column != nil, "\(globalError)")
        #expect(suite.value(forKey: "mode") == .string("locked") && suite.objectIsForced(forKey: "mode"))
        #expect(suite.value(forKey: "locale") == .string("fr"))
        #expect(suite.value(forKey: "port") == .integer(80), "the other layers keep working")

        // Writes go to the suite's file only: the layer files keep their bytes.
        let before = try [managed, system, global].map { try Data(contentsOf: $0) }
        suite.set(8080, forKey: "port")
        suite.set("de", forKey: "locale")
        suite.set("open", forKey: "mode")
        try suite.flush()
        #expect(try [managed, system, global].map { try Data(contentsOf: $0) } == before)
        #expect(suite.value(forKey: "port") == .integer(8080) && suite.value(forKey: "mode") == .string("locked"))
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file away"))
    func aManagedFileOwnedByAnotherUserIsIgnoredWithAnErrorNamingIt() throws {
        let managed = try layers.write(#"{"mode": "locked"}"#, "owned", in: layers.managed)
        #expect(chown(managed.path, 65534, 65534) == 0)
        let suite = try layers.suite("owned")
        #expect(suite.value(forKey: "mode") == nil && !suite.objectIsForced(forKey: "mode"))
        let error = try #require(suite.currentErrors.first)
        #expect(error.kind == .untrustedFile && error.fileURL == managed)
        #expect(error.description.contains("owned by user 65534"), "\(error)")
    }

    @Test func anUntrustedSystemFileIsIgnoredWithAnErrorNamingIt() throws {
        let system = try layers.write(#"{"port": 80}"#, "untrusted", in: layers.system[0])
        #expect(chmod(system.path, 0o666) == 0)
        let suite = try layers.suite("untrusted")
        #expect(suite.value(forKey: "port") == nil)
        let error = try #require(suite.currentErrors.first)
        #expect(error.kind == .untrustedFile && error.fileURL == system)
        #expect(error.description.contains("writable by others"))

        #expect(chmod(system.path, 0o644) == 0)
        suite.reload()
        #expect(suite.value(forKey: "port") == .integer(80))
        #expect(suite.currentErrors.isEmpty)
    }

    @Test func theGlobalDomainIsSharedWhateverTheSuitesDirectory() throws {
        let global = try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        let suite = try layers.suite("uses-global")
        #expect(suite.value(forKey: "locale") == .string("fr"))
        #expect(suite.origin(forKey: "locale") == .global(global))
        // The global domain's own suite does not read itself as a layer.
        let own = try SuiteStorage(
            fileURL: global, format: .json, layers: DefaultsLayer.standard, places: layers.places)
        #expect(own.layerSources.count == 4, "managed, arguments and two system directories")
        #expect(!own.layerSources.contains { $0.changeOrigin == .global(global) })
    }
}

/// A cloud store as a layer: the fleet's value under the machine's own file, live.
@Suite struct CloudLayerTests {
    let layers = LayerFixture()

    @Test func aCloudStoresKeysAreALiveLayerBelowTheFile() throws {
        let store = CloudKeyValueStore.inMemory()
        store.set("eu", forKey: "fleet.region")
        store.set("unrelated", forKey: "region")
        try layers.write(#"{"region": "sys", "zone": "sys"}"#, "fleet", in: layers.system[0])
        let suite = try layers.suite("fleet", layers: [.managed, .file, .cloud(store, prefix: "fleet."), .system])
        #expect(suite.value(forKey: "region") == .string("eu"))
        #expect(suite.origin(forKey: "region") == .cloud)
        #expect(suite.value(forKey: "zone") == .string("sys"), "the system layer is below the cloud")

        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }
        store.set("us", forKey: "fleet.region")
        #expect(changes.waitFor(key: "region"))
        #expect(changes.changes.first == DefaultsChange(keys: ["region"], origin: .outside, layer: .cloud))
        #expect(suite.value(forKey: "region") == .string("us"))

        // The machine's own file overrides the fleet: the store's later changes of the key are hidden.
        suite.set("mine", forKey: "region")
        changes.clear()
        store.set("ap", forKey: "fleet.region")
        store.set("other-prefix", forKey: "region")
        store.set(1, forKey: "fleet.marker")
        #expect(changes.waitFor(key: "marker"))
        #expect(changes.changes(before: "marker").isEmpty, "\(changes.changes)")
        #expect(suite.value(forKey: "region") == .string("mine"))
        #expect(store.storedValue(forKey: "fleet.region") == .string("ap"), "the suite never writes the store")
    }
}
