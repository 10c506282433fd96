import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The local copy is saved in the background and coalesced, without losing a write to a normal exit or
/// a released store; `synchronize()` gives up at once when every endpoint refuses connections.
@Suite struct CloudLocalCopySaverTests {
    let directory = TemporaryDirectory()

    @Test func aBurstOfWritesIsSavedInFarFewerSavesAndTheLastStateWins() throws {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let copy = try #require(store.core.localCopy)
        for index in 0..<400 { store.set(Int64(index), forKey: "k\(index % 20)") }
        store.synchronize()  // waits for the saver
        let saves = copy.saveCount.withLock { $0 } + copy.recordCount.withLock { $0 }
        print("cloud saver: 400 writes saved in \(saves) saves and journal records")
        #expect(saves >= 1 && saves < 100, "one per write would be 400")
        let values = try #require(try localCopyOnDisk(copy.fileURL)["values"]?.dictionaryValue)
        #expect(values.count == 20)
        #expect(values["k19"] == .integer(399) && values["k0"] == .integer(380))
    }

    @Test func aReleasedStoreHasSavedEveryWriteItTook() throws {
        for round in 0..<5 {
            do {
                let store = CloudKeyValueStore.localOnly(directory: directory.url)
                for index in 0..<50 { store.set(Int64(round * 100 + index), forKey: "k\(index)") }
            }
            let reopened = CloudKeyValueStore.localOnly(directory: directory.url)
            #expect(reopened.longLong(forKey: "k49") == Int64(round * 100 + 49), "round \(round)")
        }
    }

    /// A save that fails (here: both slot files replaced by directories, which even root cannot open for
    /// writing) is reported and tried again on its own, so the write reaches the disk once the problem is
    /// gone, with no later write to carry it and before the process exits.
    @Test func aFailedSaveIsTriedAgainUntilItSucceeds() throws {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let copy = try #require(store.core.localCopy)
        store.set("first", forKey: "k")
        store.synchronize()
        let slots = [copy.slotPath(0), copy.slotPath(1)]
        for slot in slots {
            try? FileManager.default.removeItem(atPath: slot)  // the first save wrote one of the two
            try FileManager.default.createDirectory(atPath: slot, withIntermediateDirectories: false)
        }
        store.set("second", forKey: "k")
        #expect(
            eventually {
                store.currentErrors.contains { $0.message.contains("cannot write the cloud store's local copy") }
            },
            "the failed save was not reported: \(store.currentErrors)")
        for slot in slots { try FileManager.default.removeItem(atPath: slot) }
        #expect(
            eventually { (try? localCopyOnDisk(copy.fileURL))?["values"]?.dictionaryValue?["k"] == .string("second") },
            "the write never reached the disk after the problem was gone")
        #expect(
            eventually { !store.currentErrors.contains { $0.message.contains("local copy") } }, "\(store.currentErrors)"
        )
    }

    // MARK: Writes the server confirmed

    /// A syncing store's core with its local copy.
    private func syncingCore() -> (CloudStoreCore, CloudLocalCopy) {
        let share = CloudLocalCopyShare(fileURL: directory.file("etcd-copy"))
        let core = CloudStoreCore(state: CloudState(), localCopy: share, limits: .iCloud, confirmsWrites: true)
        return (core, share.own)
    }

    /// A write of `key` made as a syncing store makes it: in memory and pending, its save taken over by the
    /// sync thread.
    private func write(
        _ value: Int64, of key: String, generation: Int, basedOn revision: Int64 = 0, in core: CloudStoreCore
    ) -> PendingWrite {
        let write = PendingWrite(value: .integer(Int(value)), baseRevision: revision, generation: generation)
        core.state.withLock { state in
            state.setValue(write.value, forKey: key)
            state.pending[key] = write
        }
        core.saveLocalCopy(.localWriteFlushedByCaller(key))
        return write
    }

    private func diskWrites(_ copy: CloudLocalCopy) -> Int {
        copy.saveCount.withLock { $0 } + copy.recordCount.withLock { $0 }
    }

    /// The server holds a write it confirmed: the sync thread's save of it writes nothing, the next whole save
    /// takes it in; `synchronize()`'s flush, which promises every write on disk, records it at once.
    @Test func aWriteTheServerConfirmedBeforeItsSaveIsNotRecordedUntilAFlushAsksForIt() throws {
        let (core, copy) = syncingCore()
        let first = write(1, of: "k", generation: 1, in: core)
        core.confirmUpload(first, forKey: "k", revision: 7)
        core.flushUnconfirmedWrites()
        #expect(diskWrites(copy) == 0, "the confirmed write was saved by the sync thread's flush")
        core.flushLocalCopy()
        #expect(diskWrites(copy) == 1)
        let onDisk = try localCopyOnDisk(copy.fileURL)
        #expect(onDisk["values"]?.dictionaryValue?["k"] == .integer(1))
        #expect(onDisk["pending"]?.dictionaryValue?.isEmpty ?? true, "\(onDisk)")
    }

    /// A write confirmed while a newer write of the key waits is no reason to skip the newer one's record.
    @Test func aNewerWriteOfTheKeyKeepsItsRecordWhenTheOlderOneIsConfirmed() throws {
        let (core, copy) = syncingCore()
        let first = write(1, of: "k", generation: 1, in: core)
        _ = write(2, of: "k", generation: 2, in: core)
        core.confirmUpload(first, forKey: "k", revision: 7)
        core.flushUnconfirmedWrites()
        #expect(diskWrites(copy) == 1)
        let onDisk = try localCopyOnDisk(copy.fileURL)
        #expect(onDisk["values"]?.dictionaryValue?["k"] == .integer(2))
        #expect(onDisk["pending"]?.dictionaryValue?.keys.sorted() == ["k"], "\(onDisk)")
    }

    /// With an older pending write that created the key on disk, a confirmed write is recorded as usual:
    /// skipped, a restart would upload the older write again, creating the key anew if it was deleted since.
    @Test func aConfirmedWriteIsRecordedWhileTheDiskHoldsAnOlderPendingCreateOfTheKey() throws {
        let (core, copy) = syncingCore()
        _ = write(1, of: "k", generation: 1, in: core)
        core.flushUnconfirmedWrites()  // the upload was slow: the write is on disk, pending
        #expect(try localCopyOnDisk(copy.fileURL)["pending"]?.dictionaryValue?.keys.sorted() == ["k"])
        let second = write(2, of: "k", generation: 2, in: core)
        core.confirmUpload(second, forKey: "k", revision: 9)
        core.flushUnconfirmedWrites()
        #expect(diskWrites(copy) == 2)
        let onDisk = try localCopyOnDisk(copy.fileURL)
        #expect(onDisk["values"]?.dictionaryValue?["k"] == .integer(2))
        #expect(onDisk["pending"]?.dictionaryValue?.isEmpty ?? true, "the older pending write stayed: \(onDisk)")
        // That record settled the key: its next confirmed write needs none.
        let third = write(3, of: "k", generation: 3, in: core)
        core.confirmUpload(third, forKey: "k", revision: 11)
        core.flushUnconfirmedWrites()
        #expect(diskWrites(copy) == 2)
    }

    /// A create saved as pending (its answer was late) is recorded as confirmed once the server confirms it,
    /// not a second later with the next whole save: until then a crash, and a deletion by another machine,
    /// would have a restarted store create the key anew.
    @Test func aCreateSavedAsPendingIsRecordedAsConfirmedOnceConfirmed() throws {
        let (core, copy) = syncingCore()
        let first = write(1, of: "k", generation: 1, in: core)
        core.flushUnconfirmedWrites()  // the upload was slow: the create is on disk, pending
        #expect(try localCopyOnDisk(copy.fileURL)["pending"]?.dictionaryValue?.keys.sorted() == ["k"])
        core.confirmUpload(first, forKey: "k", revision: 7)
        core.flushUnconfirmedWrites()  // after the step the confirmation queued, if it has not run yet
        let onDisk = try localCopyOnDisk(copy.fileURL)
        #expect(onDisk["pending"]?.dictionaryValue?.isEmpty ?? true, "the create is still pending on disk: \(onDisk)")
        #expect(onDisk["values"]?.dictionaryValue?["k"] == .integer(1))
        #expect(!core.localCopyMayHoldPendingCreate(of: "k"))
    }

    /// An older pending write on disk that was based on a revision of the key is no reason to record: a
    /// restarted store's first read drops it (the key has moved past that revision, or was deleted).
    @Test func anOlderPendingWriteBasedOnARevisionDoesNotHoldBackTheSkip() throws {
        let (core, copy) = syncingCore()
        _ = write(1, of: "k", generation: 1, basedOn: 5, in: core)
        core.flushUnconfirmedWrites()
        #expect(try localCopyOnDisk(copy.fileURL)["pending"]?.dictionaryValue?.keys.sorted() == ["k"])
        #expect(!core.localCopyMayHoldPendingCreate(of: "k"))
        let second = write(2, of: "k", generation: 2, basedOn: 7, in: core)
        core.confirmUpload(second, forKey: "k", revision: 9)
        core.flushUnconfirmedWrites()
        #expect(diskWrites(copy) == 1, "the confirmed write was recorded")
    }

    @Test func synchronizeGivesUpAtOnceWhenEveryEndpointRefusesConnections() throws {
        // Port 1 on loopback: nothing listens there, so connecting is refused at once. Requests and
        // synchronize() get 30 s: a refusal is a definite "no" that ends the wait, so it returns before
        // either timeout could end it.
        let timeout: TimeInterval = 30
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: [URL(string: "http://127.0.0.1:1")!, URL(string: "http://[::1]:1")!], namespace: "n",
                stateDirectory: directory.file("refused"), requestTimeout: timeout, probeInterval: 0.5))
        store.set("kept", forKey: "k")
        for _ in 0..<3 {
            let start = ContinuousClock.now
            #expect(store.synchronize(timeout: timeout) == false)
            let took = ContinuousClock.now - start
            print("cloud synchronize against refused endpoints: \(took)")
            #expect(took < .seconds(timeout), "it waited out its timeout for members that refuse connections")
        }
        #expect(store.hasPendingChanges && store.string(forKey: "k") == "kept")
        #expect(
            store.currentErrors.contains {
                $0.message.contains("cannot be reached") && $0.message.contains("127.0.0.1:1")
            })
    }
}

/// The same guarantees against a real etcd node, with a child process.
@Suite(.serialized, EtcdCluster.required) struct EtcdLocalCopyDurabilityTests {
    let directory = TemporaryDirectory()

    @Test func writesOfAProcessThatExitsRightAfterSetAreOnDiskAndUploadedAfterTheRestart() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let state = directory.file("machine")
        let keys = (0..<40).map { "k\($0)" }
        let process = Process()
        process.executableURL = TestAgent.executableURL
        process.arguments =
            [
                "cloud", etcd.endpoints.map(\.absoluteString).joined(separator: ","), namespace, state.path,
                "set-and-exit"
            ]
            + keys.flatMap { [$0, "int:\($0.dropFirst())"] }
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        // The copy the process left has every write (pending, or confirmed if the upload was quicker).
        let copyURL = try #require(
            try FileManager.default.contentsOfDirectory(
                at: state.appendingPathComponent("cloud"), includingPropertiesForKeys: nil
            )
            .first { $0.lastPathComponent.hasPrefix("etcd-") && $0.pathExtension.hasPrefix("slot") }?
            .deletingPathExtension())
        let values = try #require(try localCopyOnDisk(copyURL)["values"]?.dictionaryValue)
        #expect(values.count == 40 && values["k39"] == .integer(39), "the exit lost writes: \(values.keys.sorted())")

        // Restarted: the values are there before any answer, and they reach the server.
        let restarted = try cloudMachine(etcd.endpoints, namespace: namespace, state: state)
        #expect(restarted.longLong(forKey: "k39") == 39)
        #expect(restarted.synchronize(timeout: 20))
        for key in ["k0", "k17", "k39"] {
            #expect(try rawEtcdValue(etcd.endpoints[0], namespace, key) == String(key.dropFirst()))
        }
    }

    @Test func aWriteIsSavedAtOnceWhileTheMemberDoesNotAnswerItsUpload() throws {
        // A member of its own: it is stopped with SIGSTOP (connections stay open, nothing answers).
        let etcd = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        // Longer than both waits below together: a save that waited for the upload's answer or its timeout
        // cannot pass them.
        let requestTimeout: TimeInterval = 120
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: etcd.endpoints, namespace: namespace, stateDirectory: directory.file("hung"),
                requestTimeout: requestTimeout, probeInterval: 60))
        #expect(store.synchronize(timeout: 20))  // loaded, watching; the sync thread waits for work
        let file = try #require(store.localCopyURL)
        func onDisk(_ key: String) -> DefaultsValue? { (try? localCopyOnDisk(file))?["values"]?.dictionaryValue?[key] }
        etcd.pause(0)
        defer { etcd.pause(0, resume: true) }
        // The waiting sync thread takes this write's save and does it once the upload is sent, not when
        // an answer (or the request timeout) comes.
        store.set(Int64(1), forKey: "first")
        #expect(eventually(timeout: .seconds(30)) { onDisk("first") == .integer(1) }, "the save waited for the member")
        // The sync thread is now stuck waiting for the member: the next write is saved without it.
        store.set(Int64(2), forKey: "second")
        #expect(
            eventually(timeout: .seconds(30)) { onDisk("second") == .integer(2) },
            "the save waited for the busy sync thread")
        #expect(
            try #require(try localCopyOnDisk(file)["pending"]?.dictionaryValue).keys.sorted() == ["first", "second"])
        etcd.pause(0, resume: true)
        #expect(store.synchronize(timeout: 40))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "first") == "1")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "second") == "2")
    }

    /// A confirmed write skips its record, so a process killed before its next whole save leaves an older
    /// entry of the key on disk. That entry must never be a pending write older than the server's: a restarted
    /// store would upload it again — here over another machine's deletion, bringing an old value back. A
    /// member that answers late makes the first write pending on disk; the next write of the key is then saved
    /// before it is sent, and the process is killed as soon as it is confirmed.
    @Test func aProcessKilledRightAfterAConfirmedWriteBringsBackNoOlderWrite() throws {
        let etcd = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("killed")
        let child = Process()
        child.executableURL = TestAgent.executableURL
        child.arguments = [
            "cloud", etcd.endpoints.map(\.absoluteString).joined(separator: ","), namespace, state.path, "confirm-loop"
        ]
        let input = Pipe(), output = Pipe()
        (child.standardInput, child.standardOutput) = (input, output)
        let lines = LineReader(output.fileHandleForReading)
        try child.run()
        defer {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            child.waitUntilExit()
        }
        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        #expect(lines.waitFor(timeout: .seconds(30)) { $0 == "ready" }, "\(lines.lines)")
        let copy = try #require(
            try FileManager.default.contentsOfDirectory(
                at: state.appendingPathComponent("cloud"), includingPropertiesForKeys: nil
            )
            .first { $0.lastPathComponent.hasPrefix("etcd-") && $0.pathExtension.hasPrefix("slot") }?
            .deletingPathExtension())
        func pendingOnDisk() -> [String: DefaultsValue] {
            (try? localCopyOnDisk(copy))?["pending"]?.dictionaryValue ?? [:]
        }

        etcd.pause(0)
        send("set k int:1")
        #expect(eventually(timeout: .seconds(20)) { pendingOnDisk()["k"] != nil }, "the late upload was not saved")
        etcd.pause(0, resume: true)
        #expect(lines.waitFor(timeout: .seconds(30)) { $0 == "confirmed k" }, "\(lines.lines)")
        send("set k int:2")
        #expect(
            eventually(timeout: .seconds(30)) { lines.lines.count(where: { $0 == "confirmed k" }) == 2 },
            "\(lines.lines)")
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()

        #expect(try rawEtcdDelete(etcd.endpoints[0], namespace, "k"))  // another machine deletes the key
        let restarted = try cloudMachine(etcd.endpoints, namespace: namespace, state: state)
        #expect(restarted.synchronize(timeout: 20))
        #expect(
            restarted.value(forKey: "k") == nil,
            "an older write came back: \(String(describing: restarted.value(forKey: "k")))")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == nil)
    }

    @Test func theLastSeenRevisionReachesTheLocalCopyWithoutAnotherWrite() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        #expect(store.synchronize(timeout: 20))
        store.set("v", forKey: "k")
        #expect(store.synchronize(timeout: 20))
        let written = try #require(try rawEtcdModRevision(etcd.endpoints[0], namespace, "k"))
        // The echo of the write moves only the last seen revision, and the upload's answer only drops the
        // pending write: both saved with the next save, or on their own within the saver's bookkeeping delay.
        // (A save may come between the two when the echo arrives before the answer: the revision on disk
        // with the write still pending, harmless, so the test waits for both.)
        let file = try #require(store.localCopyURL)
        #expect(
            eventually(timeout: .seconds(10)) {
                guard let copy = try? localCopyOnDisk(file), case .integer(let revision)? = copy["revision"] else {
                    return false
                }
                return Int64(revision) >= written && copy["pending"]?.dictionaryValue?.isEmpty == true
            }, "\((try? localCopyOnDisk(file)).map { "\($0)" } ?? "no copy")")
    }

    @Test func aServerChangeIsAnnouncedAtOnceAndSavedByTheBookkeepingTimer() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("observer"))
        #expect(store.synchronize(timeout: 20))
        let copy = try #require(store.core.localCopy)
        // What the store holds when it announces each change (the handler runs as it is announced).
        let heard = Locked<[Int64]>([])
        let observation = store.observe(keys: ["k"]) { _ in heard.withLock { $0.append(store.longLong(forKey: "k")) } }
        defer { observation.cancel() }
        let savesBefore = copy.saveCount.withLock { $0 }
        let start = ContinuousClock.now
        let changes = 20
        for index in 1...changes {
            #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "k", "\(index)"))
            #expect(
                eventually { heard.withLock { $0.last } == Int64(index) },
                "change \(index) was not announced with its value")
        }
        let announced = ContinuousClock.now
        // On disk without another write (the saver's timer saves it within its bookkeeping delay)...
        #expect(
            eventually {
                (try? localCopyOnDisk(copy.fileURL))?["values"]?.dictionaryValue?["k"] == .integer(changes)
            })
        print(
            "cloud saver: the last server change reached the disk \(ContinuousClock.now - announced) after its announcement"
        )
        // ...in about one save per bookkeeping delay, not one per change.
        let saves = copy.saveCount.withLock { $0 } - savesBefore
        let elapsed = ContinuousClock.now - start
        let bound = Int((elapsed / .seconds(CloudLocalCopySaver.bookkeepingDelay)).rounded(.up)) + 1
        print("cloud saver: \(changes) server changes in \(elapsed) saved in \(saves) saves")
        #expect(saves <= bound && saves < changes, "\(saves) saves for \(changes) server changes in \(elapsed)")
        #expect(heard.withLock { $0 } == (1...changes).map(Int64.init), "each change announced once, in order")
    }
}

/// The modification revision of `namespace/key` on the server (no library code), or nil when absent.
func rawEtcdModRevision(_ endpoint: URL, _ namespace: String, _ key: String) throws -> Int64? {
    let body = "{\"key\":\"\(Data("\(namespace)/\(key)".utf8).base64EncodedString())\"}"
    guard let answer = try synchronousPost(endpoint, "/v3/kv/range", body),
        let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
        let kvs = object["kvs"] as? [[String: Any]], let revision = kvs.first?["mod_revision"] as? String
    else { return nil }
    return Int64(revision)
}
