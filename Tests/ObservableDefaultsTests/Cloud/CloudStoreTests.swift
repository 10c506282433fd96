import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The cloud store without a server: development mode, the local-only store, configuration, value text.
@Suite struct CloudStoreTests {
    let directory = TemporaryDirectory()

    @Test func developmentModeIsSharedInTheProcessAndAnnouncesOnlySimulatedChangesWithTheirReason() throws {
        let store = CloudKeyValueStore.development
        #expect(store.mode == .development)
        let key = "dev-\(UInt32.random(in: 0 ... .max))"
        let recorder = CloudRecorder()
        let observation = store.observe(prefix: key) { recorder.record($0) }
        defer { observation.cancel() }
        let posted = Locked<[(reason: Int?, keys: [String]?)]>([])
        let notification = NotificationCenter.default.addObserver(
            forName: CloudKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { note in
            let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]
            if keys?.first?.hasPrefix(key) == true {
                posted.withLock { $0.append((note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int, keys)) }
            }
        }
        defer { NotificationCenter.default.removeObserver(notification) }

        store.set(Int64(3), forKey: key + ".own")  // own writes: silent
        #expect(CloudKeyValueStore.development.longLong(forKey: key + ".own") == 3)
        try store.simulateExternalChange([key + ".a": .string("x"), key + ".own": nil], reason: .serverChange)
        try store.simulateExternalChange([key + ".b": .bool(true)], reason: .accountChange)
        try store.simulateExternalChange([key + ".c": .integer(1)], reason: .quotaViolation)  // announced only
        #expect(store.synchronize())
        #expect(
            recorder.changes == [
                CloudChange(keys: [key + ".a", key + ".own"], reason: .serverChange),
                CloudChange(keys: [key + ".b"], reason: .accountChange),
                CloudChange(keys: [key + ".c"], reason: .quotaViolation)
            ])
        #expect(store.string(forKey: key + ".a") == "x")
        #expect(store.object(forKey: key + ".own") == nil)
        #expect(store.bool(forKey: key + ".b"))
        #expect(store.object(forKey: key + ".c") == nil)
        #expect(eventually { posted.withLock { $0.count } == 3 })
        let reasons = posted.withLock { $0 }.map(\.reason)
        #expect(
            reasons == [
                NSUbiquitousKeyValueStoreServerChange, NSUbiquitousKeyValueStoreAccountChange,
                NSUbiquitousKeyValueStoreQuotaViolationChange
            ])
        #expect(posted.withLock { $0 }.first?.keys == [key + ".a", key + ".own"])
    }

    @Test func onlyTheDevelopmentStoreAcceptsSimulatedChanges() {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        #expect(throws: DefaultsError.self) { try store.simulateExternalChange(["a": .integer(1)]) }
    }

    @Test func theLocalOnlyStoreKeepsValuesInAFileAndSaysOnceThatItDoesNotSync() throws {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        store.set("debug", forKey: "level")
        store.set(["a", "b"] as [Any], forKey: "tags")
        store.set(Data([1, 2]), forKey: "blob")
        #expect(store.synchronize())
        #expect(eventually { errors.errors.count == 1 })
        #expect(errors.errors.first?.message.contains("no cloud is configured") == true)
        #expect(errors.errors.first?.message.contains(directory.url.path) == true)

        let again = CloudKeyValueStore.localOnly(directory: directory.url)
        #expect(again.string(forKey: "level") == "debug")
        #expect(again.array(forKey: "tags") as? [String] == ["a", "b"])
        #expect(again.data(forKey: "blob") == Data([1, 2]))
        #expect(again.value(forKey: "blob") == .string("AQI="))  // data is base64 text, as in a JSON suite
        #expect(
            try localCopyOnDisk(try #require(again.localCopyURL))["values"]?.dictionaryValue?["level"]
                == .string("debug"))
    }

    /// A string value whose JSON text (quotes included) is `bytes` long.
    private func text(_ bytes: Int) -> String { String(repeating: "x", count: bytes - 2) }

    /// The total counts exactly what the store holds: an overwrite frees the old value's bytes, a removal
    /// all of them, a value that fills the total to the byte fits, one byte more does not — also in a store
    /// loaded from the local copy.
    @Test func theTotalLimitCountsWhatTheStoreHoldsThroughOverwritesAndRemovals() {
        let limits = CloudLimits(
            maximumKeyCount: 100, maximumTotalBytes: 100, maximumValueBytes: 100, maximumKeyBytes: 64)
        let store = CloudKeyValueStore.localOnly(directory: directory.url, limits: limits)
        store.set(text(40), forKey: "a")
        store.set(text(40), forKey: "b")
        store.set(text(30), forKey: "c")  // 110 bytes: refused
        #expect(store.string(forKey: "c") == nil)
        store.set(text(10), forKey: "a")  // 50
        store.set(text(30), forKey: "c")  // 80
        #expect(store.string(forKey: "c") == text(30))
        store.removeObject(forKey: "b")  // 40
        store.set(text(60), forKey: "d")  // 100: the limit itself
        #expect(store.string(forKey: "d") == text(60))
        store.set(text(3), forKey: "e")  // 103: refused
        #expect(store.string(forKey: "e") == nil)
        #expect(store.core.state.withLock { ($0.totalBytes, $0.sizes.values.reduce(0, +)) } == (100, 100))
        #expect(store.synchronize())

        let loaded = CloudKeyValueStore.localOnly(directory: directory.url, limits: limits)
        #expect(loaded !== store)
        #expect(loaded.core.state.withLock { $0.totalBytes } == 100)
        loaded.set(text(3), forKey: "e")
        #expect(loaded.string(forKey: "e") == nil)
        loaded.removeObject(forKey: "d")
        loaded.set(text(3), forKey: "e")
        #expect(loaded.string(forKey: "e") == text(3))
    }

    /// A store at its limits still takes an overwrite that fits once the old value is gone: the key count
    /// is full but the key is there already; the total is full but the new value is smaller than the old.
    @Test func aFullStoreStillTakesOverwritesThatFit() {
        let store = CloudKeyValueStore.localOnly(
            directory: directory.url,
            limits: CloudLimits(
                maximumKeyCount: 3, maximumTotalBytes: 100, maximumValueBytes: 100, maximumKeyBytes: 64))
        store.set(text(20), forKey: "a")
        store.set(text(20), forKey: "b")
        store.set(text(60), forKey: "c")  // 3 keys, 100 bytes: both limits reached
        store.set(text(2), forKey: "d")  // a fourth key: refused
        #expect(store.string(forKey: "d") == nil)
        store.set(text(10), forKey: "a")  // 90: an existing key, smaller
        #expect(store.string(forKey: "a") == text(10))
        store.set(text(30), forKey: "b")  // 100 again: the old 20 bytes are freed first
        #expect(store.string(forKey: "b") == text(30))
        store.set(text(11), forKey: "a")  // 101: refused
        #expect(store.string(forKey: "a") == text(10))
        #expect(store.core.state.withLock { ($0.totalBytes, $0.sizes.count) } == (100, 3))
    }

    @Test func aDamagedLocalCopyIsMovedAsideAndReported() throws {
        let file = CloudKeyValueStore.localOnlyCopyURL(in: directory.url)
        do {
            let store = CloudKeyValueStore.localOnly(directory: directory.url)
            store.set(1, forKey: "a")
        }  // released: a whole save in the slots
        let copy = CloudLocalCopy(fileURL: file)
        let saved = [0, 1].filter { FileManager.default.fileExists(atPath: copy.slotPath($0)) }
        #expect(!saved.isEmpty)
        for index in saved { try Data("{ broken".utf8).write(to: URL(fileURLWithPath: copy.slotPath(index))) }
        for index in 0...1 { try? FileManager.default.removeItem(atPath: copy.journalPath(index)) }
        let reopened = CloudKeyValueStore.localOnly(directory: directory.url)
        let movedTo = saved.map { copy.slotPath($0) + ".broken" }
        #expect(
            reopened.currentErrors.contains {
                $0.description.contains("local copy is damaged")
                    && $0.description.contains("it was moved to \(movedTo.joined(separator: " and ")) and")
            })
        #expect(movedTo.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        #expect(reopened.values().isEmpty)
    }

    @Test func aDamagedLocalCopyInTheSingleFileFormIsMovedAsideAndReported() throws {
        let file = try #require(CloudKeyValueStore.localOnly(directory: directory.url).localCopyURL)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{ broken".utf8).write(to: file)
        let reopened = CloudKeyValueStore.localOnly(directory: directory.url)
        #expect(
            reopened.currentErrors.contains {
                $0.description.contains("local copy is damaged") && $0.description.contains(".broken")
            })
        #expect(FileManager.default.fileExists(atPath: file.path + ".broken"))
        #expect(reopened.values().isEmpty)
    }

    /// A store whose local copy has a slot it cannot read says why, sets that slot aside, starts from
    /// the other, and keeps the writes it makes from then on.
    @Test func anUnreadableSlotIsReportedAndTheStoreStartsFromTheOther() throws {
        let file: URL
        do {
            let store = CloudKeyValueStore.localOnly(directory: directory.url)
            file = try #require(store.localCopyURL)
            store.set(1, forKey: "a")
            store.synchronize()
        }  // released, as by a process that ended: the next store takes the copy over
        let copy = CloudLocalCopy(fileURL: file)
        let unreadable = try #require([0, 1].first { !FileManager.default.fileExists(atPath: copy.slotPath($0)) })
        try FileManager.default.createDirectory(atPath: copy.slotPath(unreadable), withIntermediateDirectories: true)

        let reopened = CloudKeyValueStore.localOnly(directory: directory.url)
        let error = try #require(
            reopened.currentErrors.first { $0.message.contains("cannot read the cloud store's local copy") })
        #expect(
            error.errorNumber == EISDIR && error.message.contains("\(copy.slotPath(unreadable)).unread"), "\(error)")
        #expect(reopened.values() == ["a": .integer(1)])
        reopened.set(2, forKey: "b")
        reopened.synchronize()
        #expect(CloudKeyValueStore.localOnly(directory: directory.url).values() == ["a": .integer(1), "b": .integer(2)])
        // The save that succeeded does not take back what was found at start.
        #expect(reopened.currentErrors.contains { $0.message.contains("cannot read the cloud store's local copy") })
        #expect(FileManager.default.fileExists(atPath: copy.slotPath(unreadable) + ".unread"))
    }

    @Test func unsupportedValuesAndNaNAreReportedAndChangeNothing() {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        store.set(Double.nan, forKey: "ratio")
        store.set(NSObject(), forKey: "thing")
        #expect(errors.waitFor("key 'thing'"))
        #expect(errors.errors.contains { $0.key == "ratio" && $0.kind == .unsupportedValue })
        #expect(store.values().isEmpty)
    }

    @Test func theCloudAddressNamesEndpointsNamespaceAndCredentials() throws {
        let configuration = try EtcdConfiguration(url: "etcd://ops:s%40cret@10.0.0.1:2379,10.0.0.2:2379/fleet/web")
        #expect(configuration.endpoints.map(\.absoluteString) == ["http://10.0.0.1:2379", "http://10.0.0.2:2379"])
        #expect(configuration.namespace == "fleet/web")
        #expect(configuration.user == "ops" && configuration.password == "s@cret")
        for bad in ["ftp://h:1/ns", "etcd://h:1", "etcd://h/ns", "etcd://h:1/", "etcds://h/ns", "etcd:/h:1/ns"] {
            #expect(throws: DefaultsError.self, "\(bad)") { try EtcdConfiguration(url: bad) }
        }
        #expect(throws: DefaultsError.self) {
            try CloudKeyValueStore(etcd: EtcdConfiguration(endpoints: [], namespace: "n"))
        }
    }

    @Test func theDefaultStoreFollowsTheEnvironment() throws {
        let state = directory.url.path
        let cloud = CloudKeyValueStore.fromEnvironment([
            "OBSERVABLE_DEFAULTS_CLOUD": "etcd://127.0.0.1:1/fleet", "OBSERVABLE_DEFAULTS_STATE_DIRECTORY": state
        ])
        #expect(cloud.mode == .etcd)
        #expect(cloud.configuration?.namespace == "fleet")
        #expect(cloud.localCopyURL?.path.hasPrefix(state + "/cloud/etcd-fleet-") == true)
        let local = CloudKeyValueStore.fromEnvironment(["OBSERVABLE_DEFAULTS_STATE_DIRECTORY": state])
        #expect(local.mode == .localOnly)
        #expect(local.localCopyURL?.path == state + "/cloud/local.json")
        let misconfigured = CloudKeyValueStore.fromEnvironment([
            "OBSERVABLE_DEFAULTS_CLOUD": "redis://x", "OBSERVABLE_DEFAULTS_STATE_DIRECTORY": state
        ])
        #expect(misconfigured.mode == .localOnly)
        #expect(
            misconfigured.currentErrors.contains {
                $0.message.hasPrefix("OBSERVABLE_DEFAULTS_CLOUD: 'redis://x' is not a cloud address")
            })
        #expect(
            CloudKeyValueStore.fromEnvironment(["OBSERVABLE_DEFAULTS_DEV_MODE": "true"])
                === CloudKeyValueStore.development)
        #expect(
            CloudKeyValueStore.fromEnvironment(["XCODE_RUNNING_FOR_PREVIEWS": "1"]) === CloudKeyValueStore.development)
    }

    @Test func localCopiesAreSeparatePerEndpointSetAndNamespace() {
        let a = CloudStateDirectory.localCopyName(
            endpoints: [URL(string: "http://a:1")!, URL(string: "http://b:1")!], namespace: "n")
        let sameSetOtherOrder = CloudStateDirectory.localCopyName(
            endpoints: [URL(string: "http://b:1")!, URL(string: "http://a:1")!], namespace: "n")
        let otherNamespace = CloudStateDirectory.localCopyName(
            endpoints: [URL(string: "http://a:1")!, URL(string: "http://b:1")!], namespace: "m")
        #expect(a == sameSetOtherOrder)
        #expect(a != otherNamespace)
    }

    @Test func aValueIsTheSameJSONTextAsInASuiteAndReadsBack() throws {
        let value = DefaultsValue.dictionary(["b": .array([.integer(1), .double(2)]), "a": .string("x\n\"y\"")])
        let text = String(decoding: CloudValueText.encode(value), as: UTF8.self)
        #expect(text == "{\n  \"a\": \"x\\n\\\"y\\\"\",\n  \"b\": [\n    1,\n    2.0\n  ]\n}")
        #expect(try CloudValueText.decode(Data(text.utf8), key: "k") == value)
        #expect(String(decoding: CloudValueText.encode(.string("plain")), as: UTF8.self) == "\"plain\"")
        #expect(throws: DefaultsError.self) { try CloudValueText.decode(Data("nul".utf8), key: "k") }
        #expect(throws: DefaultsError.self) { try CloudValueText.decode(Data("null".utf8), key: "k") }
    }

    @Test func malformedServerAnswersAreErrorsNamingTheRequestNotCrashes() throws {
        for text in ["[]", "{\"header\":{\"revision\":\"x\"}}", "{\"kvs\":[{\"key\":\"!!\"}]}", "not json"] {
            #expect(throws: DefaultsError.self, "\(text)") {
                let answer = try EtcdAnswer(data: Data(text.utf8), context: "/v3/kv/range at http://h:1")
                _ = try answer.header()
                _ = try answer.keyValues()
            }
        }
        #expect(EtcdRequest.prefixEnd("ns/") == Data("ns0".utf8).base64EncodedString())
    }

    @Test func aStateDirectoryRemovedMeanwhileIsCreatedAgainByTheNextSave() throws {
        let state = directory.file("removed")
        let copy = CloudLocalCopy(fileURL: state.appendingPathComponent("cloud/copy.json"))
        var values = CloudState()
        _ = values.setValue(.integer(1), forKey: "k")
        try copy.save(values)
        try FileManager.default.removeItem(at: state)
        _ = values.setValue(.integer(2), forKey: "k")
        try copy.save(values)
        #expect(try copy.load()?.values["k"] == .integer(2))
        let mode = try #require(
            try FileManager.default.attributesOfItem(atPath: state.appendingPathComponent("cloud").path)[
                .posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o700, "the state directory is private: \(String(mode, radix: 8))")
    }

    @Test func aStateDirectoryThatCannotBeCreatedIsAnErrorNamingIt() throws {
        let blocker = directory.file("blocker")
        try Data("a file where the state directory's parent should be".utf8).write(to: blocker)
        let copy = CloudLocalCopy(fileURL: blocker.appendingPathComponent("cloud/copy.json"))
        do {
            try copy.save(CloudState())
            Issue.record("the save succeeded")
        } catch {
            #expect(error.message.contains("cannot create the cloud state directory"), "\(error)")
            #expect(error.fileURL?.path == blocker.appendingPathComponent("cloud").path)
        }
    }

    /// A sync thread can outlive its released store by one round; what it saves then must not land in a
    /// directory the owner has removed meanwhile (the `defaults cloud` tool removes its state directory).
    @Test func aLocalCopyWritesNothingOnceStopped() throws {
        let state = directory.file("stopped")
        let copy = CloudLocalCopy(fileURL: state.appendingPathComponent("copy.json"))
        try copy.save(CloudState())
        #expect(FileManager.default.fileExists(atPath: copy.slotPath(1)))
        copy.stopWriting()
        try FileManager.default.removeItem(at: state)
        try copy.save(CloudState())
        #expect(
            !FileManager.default.fileExists(atPath: state.path), "a save after stopWriting re-created the directory")
    }
}
