import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The local copy's two slot files: saves overwrite them in place (no new inode per save), a torn or
/// damaged slot is passed over for the other, and a copy in the earlier single-file form still loads.
@Suite struct CloudLocalCopySlotTests {
    let directory = TemporaryDirectory()

    private func inode(_ path: String) throws -> UInt64 {
        UInt64(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64 ?? 0)
    }

    /// The header is an on-disk format that other versions of the library read: pinned byte for byte
    /// (FNV-1a of `{"k":1}` and of nothing, worked out independently).
    @Test func theSlotHeaderIsByteForByteTheDocumentedFormat() {
        let slot = CloudLocalCopySlot.bytes(sequence: 42, content: Data("{\"k\":1}".utf8), paddingTo: 0)
        #expect(
            String(decoding: slot, as: UTF8.self)
                == "observable-defaults cloud local copy, sequence 00000000000000000042, length 0000000007, fnv1a64 521543ff002cda97\n{\"k\":1}"
        )
        let empty = CloudLocalCopySlot.bytes(sequence: UInt64.max, content: Data(), paddingTo: 120)
        #expect(
            String(decoding: empty, as: UTF8.self)
                == "observable-defaults cloud local copy, sequence 18446744073709551615, length 0000000000, fnv1a64 cbf29ce484222325\n"
                + String(repeating: " ", count: 120 - 113))
        #expect(CloudLocalCopySlot.read(Data(slot))?.sequence == 42)
        #expect(CloudLocalCopySlot.read(Data(empty))?.content == Data())
        #expect(CloudLocalCopySlot.sequence(inHeader: slot) == 42)
        #expect(CloudLocalCopySlot.sequence(inHeader: empty) == UInt64.max)
        #expect(
            CloudLocalCopySlot.sequence(inHeader: slot.prefix(CloudLocalCopySlot.headerPrefix.utf8.count + 19)) == nil,
            "cut short")
        #expect(
            CloudLocalCopySlot.sequence(
                inHeader: Array("observable-defaults cloud local copy, sequence 0000000000000000004x".utf8)) == nil)
        #expect(
            CloudLocalCopySlot.sequence(
                inHeader: Array("observable-defaults cloud local copy, sequence 18446744073709551616".utf8)) == nil,
            "past UInt64")
        #expect(
            CloudLocalCopySlot.sequence(
                inHeader: Array("observable-defaults cloud local copy, sequence +0000000000000000042".utf8)) == nil)
    }

    @Test func savesAlternateBetweenTwoSlotsOverwrittenInPlace() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["n": .integer(1)]))
        try copy.save(cloudState(["n": .integer(2)]))
        let inodes = try [inode(copy.slotPath(0)), inode(copy.slotPath(1))]
        for n in 3...10 { try copy.save(cloudState(["n": .integer(n)])) }
        #expect(
            try [inode(copy.slotPath(0)), inode(copy.slotPath(1))] == inodes,
            "a save replaced a slot file instead of overwriting it")
        #expect(!FileManager.default.fileExists(atPath: copy.fileURL.path))
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(10))
        // Readable: the header line, then the JSON.
        let text = try String(contentsOfFile: copy.slotPath(0), encoding: .utf8)
        #expect(text.hasPrefix(CloudLocalCopySlot.headerPrefix))
        #expect(text.contains("\"n\": 10") || text.contains("\"n\": 9"), "\(text)")
    }

    /// Two processes sharing one local copy (same configuration, same state directory): the save made
    /// last wins at load, as when each save replaced the whole file.
    @Test func theLaterSaveWinsWhenTwoWritersShareTheCopy() throws {
        let file = directory.file("copy.json")
        let first = CloudLocalCopy(fileURL: file), second = CloudLocalCopy(fileURL: file)
        try first.save(cloudState(["by": .string("first, 1")]))
        try second.save(cloudState(["by": .string("second, 1")]))
        try second.save(cloudState(["by": .string("second, 2")]))
        try first.save(cloudState(["by": .string("first, 2")]))
        #expect(try CloudLocalCopy(fileURL: file).load()?.values["by"] == .string("first, 2"))
        try second.save(cloudState(["by": .string("second, 3")]))
        #expect(try CloudLocalCopy(fileURL: file).load()?.values["by"] == .string("second, 3"))
    }

    /// The slot files stay open between saves: two descriptors whatever the number of saves, none left once
    /// writing stops. (Counted among this process's descriptors by what they name: other tests running
    /// meanwhile open and close their own.)
    @Test func theSlotFilesStayOpenBetweenSavesAndCloseWhenWritingStops() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        func descriptorsOnTheCopy() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { descriptor in
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
                return target?.hasPrefix(copy.fileURL.path) == true
            }.count
        }
        try copy.save(cloudState(["n": .integer(0)]))
        try copy.save(cloudState(["n": .integer(1)]))
        #expect(copy.openSlotCount == 2)
        #expect(try descriptorsOnTheCopy() == 2)
        for n in 2..<200 { try copy.save(cloudState(["n": .integer(n)])) }
        #expect(copy.openSlotCount == 2)
        #expect(try descriptorsOnTheCopy() == 2, "saves left descriptors open")
        copy.stopWriting()
        #expect(try descriptorsOnTheCopy() == 0)
        #expect(copy.openSlotCount == 0)
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(199))
    }

    /// A slot file moved away, removed, or replaced by another file while its descriptor is kept open:
    /// the next save writes the file at the slot's path (re-creating the directory when it is gone), never
    /// the file it had open, and what was moved away is left as it was.
    @Test func aSlotMovedRemovedOrReplacedBetweenSavesIsWrittenAtItsPath() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("state/copy.json"))
        try copy.save(cloudState(["n": .integer(1)]))
        try copy.save(cloudState(["n": .integer(2)]))
        let moved = copy.slotPath(0) + ".moved"
        try FileManager.default.moveItem(atPath: copy.slotPath(0), toPath: moved)
        let movedBytes = try Data(contentsOf: URL(fileURLWithPath: moved))
        try FileManager.default.removeItem(atPath: copy.slotPath(1))
        try copy.save(cloudState(["n": .integer(3)]))
        try copy.save(cloudState(["n": .integer(4)]))
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(4))
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == movedBytes, "a save went to the file moved away")

        // Replaced by a copy (another inode at the same path), then the whole directory removed.
        let replacement = try Data(contentsOf: URL(fileURLWithPath: copy.slotPath(0)))
        try FileManager.default.removeItem(atPath: copy.slotPath(0))
        #expect(FileManager.default.createFile(atPath: copy.slotPath(0), contents: replacement))
        try copy.save(cloudState(["n": .integer(5)]))
        try copy.save(cloudState(["n": .integer(6)]))
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(6))
        try FileManager.default.removeItem(at: directory.file("state"))
        try copy.save(cloudState(["n": .integer(7)]))
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(7))
    }

    @Test func aShorterSaveAfterALongerOneLoads() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["long": .string(String(repeating: "x", count: 3000))]))
        try copy.save(cloudState(["long": .string(String(repeating: "y", count: 3000))]))
        try copy.save(cloudState(["short": .integer(1)]))  // over the first slot's 3000 x
        let loaded = try #require(try CloudLocalCopy(fileURL: copy.fileURL).load())
        #expect(loaded.values == ["short": .integer(1)])
    }

    @Test func aTornSaveFallsBackToTheOtherSlot() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["n": .integer(1), "text": .string(String(repeating: "a", count: 5000))]))
        try copy.save(cloudState(["n": .integer(2), "text": .string(String(repeating: "b", count: 5000))]))
        // The newer save (slot 0, sequence 2) stopped half-way: its first half is new, the rest old bytes.
        let newer = try #require(copy.newestSlot())
        #expect(newer.sequence == 2)
        let path = copy.slotPath(0)
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        var torn = full.prefix(full.count / 2)
        torn.append(Data(repeating: UInt8(ascii: "a"), count: full.count - torn.count))
        try torn.write(to: URL(fileURLWithPath: path))
        let reopened = CloudLocalCopy(fileURL: copy.fileURL)
        let loaded = try #require(try reopened.load())
        #expect(loaded.values["n"] == .integer(1))
        // The next save goes into the torn slot, not over the intact one.
        try reopened.save(cloudState(["n": .integer(3)]))
        #expect(reopened.newestSlot()?.sequence == 2)
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(3))
        #expect(
            CloudLocalCopySlot.read(try Data(contentsOf: URL(fileURLWithPath: copy.slotPath(1))))?.content.isEmpty
                == false)
    }

    @Test func aDamagedSlotIsPassedOverAndBothDamagedAreMovedAsideAndReported() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["n": .integer(1)]))
        try copy.save(cloudState(["n": .integer(2)]))
        func flipByte(in path: String, at offset: Int) throws {
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            let index = data.count - offset
            data[index] ^= 0x01
            try data.write(to: URL(fileURLWithPath: path))
        }
        try flipByte(in: copy.slotPath(0), at: 5)  // inside sequence 2's JSON
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values["n"] == .integer(1))
        try flipByte(in: copy.slotPath(1), at: 5)
        #expect {
            _ = try CloudLocalCopy(fileURL: copy.fileURL).load()
        } throws: { error in
            let text = "\(error)"
            return text.contains("local copy is damaged") && text.contains("neither slot holds a complete save")
                && text.contains(".slot0.broken")
        }
        #expect(FileManager.default.fileExists(atPath: copy.slotPath(0) + ".broken"))
        #expect(FileManager.default.fileExists(atPath: copy.slotPath(1) + ".broken"))
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load() == nil)
    }

    /// A slot that exists but cannot be read is reported with the call, the file and its `errno`, and
    /// moved aside so that no later save overwrites it; a complete other slot still loads. With no
    /// slot left to load, the whole copy is moved aside and the error thrown; the same for a copy in the
    /// single-file form.
    @Test func anUnreadableSlotIsMovedAsideAndReportedAndTheOtherLoads() throws {
        let file = directory.file("copy.json")
        let copy = CloudLocalCopy(fileURL: file)
        try copy.save(cloudState(["n": .integer(1)]))  // slot 1 (sequence 1)
        try FileManager.default.createDirectory(atPath: copy.slotPath(0), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: copy.slotPath(0) + "/kept", withIntermediateDirectories: true)
        try Data("an earlier incident".utf8).write(to: URL(fileURLWithPath: copy.slotPath(0) + ".unread"))
        var problems: [DefaultsError] = []
        let reader = CloudLocalCopy(fileURL: file)
        #expect(try reader.load { problems.append($0) }?.values["n"] == .integer(1))
        #expect(problems.count == 1)
        #expect(problems.first?.errorNumber == EISDIR)
        #expect(
            problems.first?.message
                == "cannot read the cloud store's local copy (read \(copy.slotPath(0))); it was moved to \(copy.slotPath(0)).unread.2, and the store starts from the other slot, which may be one save older"
        )
        try reader.save(cloudState(["n": .integer(2)]))
        try reader.save(cloudState(["n": .integer(3)]))
        #expect(try CloudLocalCopy(fileURL: file).load()?.values["n"] == .integer(3))
        #expect(FileManager.default.fileExists(atPath: copy.slotPath(0) + ".unread.2/kept"))  // untouched
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: copy.slotPath(0) + ".unread")) == Data("an earlier incident".utf8)
        )

        // Neither slot readable: both moved aside, nothing loaded, and the next saves start afresh.
        let both = CloudLocalCopy(fileURL: directory.file("both.json"))
        try both.save(cloudState(["n": .integer(1)]))
        let kept = try Data(contentsOf: URL(fileURLWithPath: both.slotPath(1)))
        try FileManager.default.createDirectory(atPath: both.slotPath(0), withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: both.slotPath(1))
        try FileManager.default.createDirectory(atPath: both.slotPath(1), withIntermediateDirectories: true)
        try kept.write(to: URL(fileURLWithPath: both.slotPath(1) + "/saved"))
        do {
            _ = try CloudLocalCopy(fileURL: both.fileURL).load()
            Issue.record("a copy with no readable slot loaded")
        } catch {
            #expect(error.errorNumber == EISDIR, "\(error)")
            #expect(
                error.message
                    == "cannot read the cloud store's local copy (read \(both.slotPath(0))); it was moved to \(both.slotPath(0)).unread and \(both.slotPath(1)).unread, and the store starts without it"
            )
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: both.slotPath(1) + ".unread/saved")) == kept)
        #expect(try CloudLocalCopy(fileURL: both.fileURL).load() == nil)

        let single = directory.file("single.json")
        try FileManager.default.createDirectory(at: single, withIntermediateDirectories: true)
        do {
            _ = try CloudLocalCopy(fileURL: single).load()
            Issue.record("a directory in the single file's place loaded")
        } catch {
            #expect(error.errorNumber == EISDIR, "\(error)")
            #expect(
                error.message
                    == "cannot read the cloud store's local copy (read \(single.path)); it was moved to \(single.path).unread, and the store starts without it"
            )
        }
        #expect(FileManager.default.fileExists(atPath: single.path + ".unread"))
    }

    @Test func aCopyInTheSingleFileFormLoadsAndIsReplacedBySlots() throws {
        let file = directory.file("copy.json")
        var old = cloudState(["level": .string("debug")])
        old.pending["level"] = PendingWrite(value: .string("debug"), baseRevision: 7, generation: 0)
        try Data(JSONWriter.encodeSuite(CloudLocalCopy.encode(old))).write(to: file)
        let copy = CloudLocalCopy(fileURL: file)
        let loaded = try #require(try copy.load())
        #expect(loaded.values["level"] == .string("debug"))
        #expect(loaded.pending["level"]?.baseRevision == 7)
        try copy.save(loaded)
        #expect(!FileManager.default.fileExists(atPath: file.path), "the single file is left behind")
        #expect(try CloudLocalCopy(fileURL: file).load()?.pending["level"]?.baseRevision == 7)
    }

    /// A full disk during a save (a file-size limit, which a writer meets the same way): the error says so,
    /// the earlier save stays loadable meanwhile, and once there is room again the retried save keeps the
    /// write without another one coming.
    @Test func aFullDiskDuringASaveKeepsTheEarlierSaveAndTheWriteIsSavedOnceThereIsRoom() throws {
        let state = directory.file("full")
        let gate = directory.file("room-again")
        let (agent, output) = try TestAgent.start(["cloud-local-full-disk", state.path, gate.path])
        defer { if agent.isRunning { agent.terminate() } }
        let lines = LineReader(output.fileHandleForReading)
        #expect(
            lines.waitFor(timeout: .seconds(25)) { $0.hasPrefix("error: ") },
            "exit 4 means no error was heard: \(lines.lines)")
        let failed = try #require(lines.lines.first { $0.hasPrefix("error: ") })
        #expect(
            failed.contains("cannot write the cloud store's local copy") && failed.hasSuffix("errno \(EFBIG)"),
            "\(failed)")

        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        let meanwhile = try #require(try copy.load())
        #expect(meanwhile.values == ["before": .string("small")])

        #expect(FileManager.default.createFile(atPath: gate.path, contents: nil))
        #expect(lines.waitFor(timeout: .seconds(25)) { $0 == "saved" }, "\(lines.lines)")
        agent.waitUntilExit()
        #expect(agent.terminationStatus == 0, "exit 4: no error heard, 5: the retried save did not succeed")
        let after = try #require(try CloudLocalCopy(fileURL: copy.fileURL).load())
        #expect(after.values["big"] == .string(String(repeating: "x", count: 20_000)))
        #expect(after.values["before"] == .string("small"))
    }

    /// A copy this process may not touch (another user's: a daemon once run as root, then as a user): the
    /// read and every save fail with `EACCES`, each reported with the file; the store works from memory,
    /// and the other user's copy is left exactly as it was (not moved aside, not overwritten).
    @Test func aCopyOfAnotherUserIsReportedAndLeftAsItIs() throws {
        try #require(geteuid() == 0, "needs root to run the store as another user")
        let state = directory.file("root-state")
        do {
            let rootStore = CloudKeyValueStore.localOnly(directory: state)
            rootStore.set("from root", forKey: "greeting")
        }  // released: a whole save in the slots
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        let files = [0, 1].map(copy.slotPath) + [0, 1].map(copy.journalPath)
        let before = files.map { FileManager.default.contents(atPath: $0) }
        #expect(before[0...1].contains { $0 != nil })
        let listing = try FileManager.default.contentsOfDirectory(atPath: copy.fileURL.deletingLastPathComponent().path)
            .sorted()

        let (agent, output) = try TestAgent.start(["as-user", "65534", "cloud-local-unwritable", state.path])
        defer { if agent.isRunning { agent.terminate() } }
        let lines = LineReader(output.fileHandleForReading)
        #expect(
            lines.waitFor(timeout: .seconds(25)) { $0.hasPrefix("saving: ") },
            "exit 4: no save error heard: \(lines.lines)")
        agent.waitUntilExit()
        #expect(agent.terminationStatus == 0, "\(lines.lines)")

        let atStart = try #require(
            lines.lines.first { $0.hasPrefix("at start: ") && $0.contains("(open \(copy.slotPath(0)))") },
            "\(lines.lines)")
        #expect(atStart.contains("cannot read the cloud store's local copy (open \(copy.slotPath(0)))"), "\(atStart)")
        #expect(
            atStart.contains("it could not be moved aside, and the store starts without it")
                && atStart.hasSuffix("errno \(EACCES)"), "\(atStart)")
        #expect(lines.lines.contains("reads: from uid 65534"))
        let saving = try #require(lines.lines.first { $0.hasPrefix("saving: ") })
        #expect(
            saving.contains("cannot write the cloud store's local copy") && saving.hasSuffix("errno \(EACCES)"),
            "\(saving)")

        #expect(files.map { FileManager.default.contents(atPath: $0) } == before, "the other user's copy changed")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: copy.fileURL.deletingLastPathComponent().path).sorted()
                == listing)
        #expect(try copy.load()?.values == ["greeting": .string("from root")])
    }

    /// A process killed at any moment of its saves leaves a copy that loads: the last complete save, or
    /// the one before when the kill tore the newest.
    @Test func aWriterKilledMidSaveLoopLeavesALoadableCopy() throws {
        let state = directory.file("killed")
        var counters: [Int] = []
        for round in 0..<10 {
            let (child, output) = try TestAgent.start(["cloud-local-forever", state.path])
            _ = output.fileHandleForReading.availableData  // "ready": saving
            usleep(UInt32(2000 + round * 1900))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            let store = CloudKeyValueStore.localOnly(directory: state)
            // (A local-only store always says once that no cloud is configured: that is not a problem of its copy.)
            #expect(
                !store.currentErrors.contains { $0.message.contains("local copy") },
                "round \(round): \(store.currentErrors)")
            // "N xxx…" with N % 7000 x: a value cut short or mixed with an older one would not match.
            let record = store.string(forKey: "record") ?? "0 "
            let parts = record.split(separator: " ", omittingEmptySubsequences: false)
            let counter = Int(parts.first ?? "") ?? -1
            #expect(
                counter >= 0 && parts.count == 2
                    && parts[1] == Substring(String(repeating: "x", count: counter % 7000)),
                "round \(round): \(record.prefix(40))")
            counters.append(counter)
        }
        #expect(counters.contains { $0 > 0 }, "no save reached the disk: \(counters)")
    }
}
