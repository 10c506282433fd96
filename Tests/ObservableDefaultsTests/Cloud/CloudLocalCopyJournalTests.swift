import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The local copy's journal: a local write is one short record appended between whole saves; a load
/// replays the records that follow the newest complete save, and no others; a record cut short by a
/// killed process is passed over, damage is reported.
@Suite struct CloudLocalCopyJournalTests {
    let directory = TemporaryDirectory()

    /// A record's content for `values` (`nil`: the key removed).
    private func entries(_ values: [String: DefaultsValue?]) -> Data {
        CloudLocalCopyJournal.content(of: values.keys, in: cloudState(values.compactMapValues { $0 }))
    }

    private func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    /// The record is an on-disk format other versions read: pinned byte for byte.
    @Test func aRecordIsByteForByteTheDocumentedFormat() throws {
        let record = CloudLocalCopyJournal.bytes(after: 42, content: Data("{\"k\":1}".utf8))
        #expect(
            String(decoding: record, as: UTF8.self)
                == "\nobservable-defaults cloud journal record, after sequence 00000000000000000042, length 0000000007, fnv1a64 521543ff002cda97\n{\"k\":1}"
        )
        let contents = CloudLocalCopyJournal.contents(of: Data(record + record))
        #expect(contents.records.map(\.after) == [42, 42] && contents.damaged == 0)
        #expect(contents.records.first?.content == Data("{\"k\":1}".utf8))
    }

    /// An entry holds the value (or its removal), the server revision and the pending write, and puts
    /// exactly those back.
    @Test func anEntryPutsBackValueRevisionAndPendingWrite() throws {
        var written = CloudState()
        written.setValue(.string("mine"), forKey: "pending")
        written.serverRevisions["pending"] = 7
        written.pending["pending"] = PendingWrite(value: .string("mine"), baseRevision: 7, generation: 1)
        written.serverRevisions["removed"] = 9
        written.pending["removed"] = PendingWrite(value: nil, baseRevision: 9, generation: 2)
        written.setValue(.integer(3), forKey: "confirmed")
        written.serverRevisions["confirmed"] = 12
        let content = CloudLocalCopyJournal.content(of: ["pending", "removed", "confirmed"], in: written)
        #expect(
            String(decoding: content, as: UTF8.self) == """
                {
                  "confirmed": {"value": 3, "revision": 12},
                  "pending": {"value": "mine", "revision": 7, "pending": {"base": 7, "value": "mine"}},
                  "removed": {"removed": true, "revision": 9, "pending": {"base": 9, "removed": true}}
                }
                """)

        var loaded = cloudState(["removed": .string("old"), "confirmed": .integer(1), "other": .bool(true)])
        loaded.pending["confirmed"] = PendingWrite(value: .integer(1), baseRevision: 2, generation: 1)
        loaded.nextGeneration = 2
        CloudLocalCopyJournal.apply(
            try CloudLocalCopyJournal.entries(in: content, fileURL: directory.file("j")), to: &loaded)
        #expect(loaded.values == ["pending": .string("mine"), "confirmed": .integer(3), "other": .bool(true)])
        #expect(loaded.serverRevisions == ["pending": 7, "removed": 9, "confirmed": 12])
        #expect(loaded.knownRevisions["confirmed"] == 12)
        #expect(
            loaded.pending.mapValues { [$0.value, .integer(Int($0.baseRevision))] }
                == ["pending": [.string("mine"), .integer(7)], "removed": [nil, .integer(9)]])
        #expect(Set(loaded.pending.values.map(\.generation)).count == 2, "each replayed write has its own generation")
        #expect(
            loaded.totalBytes == CloudValueText.encode(.string("mine")).count + CloudValueText.encode(.integer(3)).count
                + CloudValueText.encode(.bool(true)).count, "sizes follow the replayed values")

        var quoted = CloudState()
        quoted.setValue(.string("x"), forKey: "a \"quoted\"\nkey")
        var replayed = CloudState()
        CloudLocalCopyJournal.apply(
            try CloudLocalCopyJournal.entries(
                in: CloudLocalCopyJournal.content(of: quoted.values.keys, in: quoted), fileURL: directory.file("j")),
            to: &replayed)
        #expect(replayed.values == quoted.values)

        for bad in [
            "{\"k\": 1}", "{\"k\": {}}", "{\"k\": {\"value\": 1, \"revision\": \"x\"}}",
            "{\"k\": {\"removed\": true, \"pending\": {\"value\": 1}}}"
        ] {
            #expect(throws: DefaultsError.self, "\(bad)") {
                try CloudLocalCopyJournal.entries(in: Data(bad.utf8), fileURL: directory.file("j"))
            }
        }
    }

    /// Records that follow the newest save are replayed in the order appended; records that a later whole
    /// save took in are not (an older value must not come back).
    @Test func aLoadReplaysTheRecordsAfterTheNewestSaveAndNoOthers() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["a": .integer(1)]))  // sequence 1
        _ = try copy.append(entries(["b": .integer(1)]))  // after 1: journal1
        _ = try copy.append(entries(["b": .integer(2), "a": nil]))  // after 1, later
        var loaded = try #require(try CloudLocalCopy(fileURL: copy.fileURL).load())
        #expect(loaded.values == ["b": .integer(2)])

        try copy.save(cloudState(["b": .integer(2), "c": .integer(1)]))  // sequence 2: the records are in it
        #expect(size(copy.journalPath(0)) <= 0, "journal 0 (after save 0) is emptied or absent")
        #expect(size(copy.journalPath(1)) > 0, "journal 1 holds the records after save 1 until save 3")
        _ = try copy.append(entries(["c": .integer(2)]))  // after 2: journal0
        loaded = try #require(try CloudLocalCopy(fileURL: copy.fileURL).load())
        #expect(loaded.values == ["b": .integer(2), "c": .integer(2)], "the records after save 1 were replayed again")

        try copy.save(cloudState(["b": .integer(2), "c": .integer(2)]))  // sequence 3 empties journal 1
        #expect(size(copy.journalPath(1)) == 0)
        #expect(size(copy.journalPath(0)) > 0)
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values == ["b": .integer(2), "c": .integer(2)])
    }

    /// Two processes sharing a copy: a record appended after the other's newer save follows that save,
    /// so it is replayed on top of it (it was not lost to "the later save wins").
    @Test func aRecordAfterAnotherWritersSaveFollowsThatSave() throws {
        let file = directory.file("shared.json")
        let first = CloudLocalCopy(fileURL: file)
        let second = CloudLocalCopy(fileURL: file)
        try first.save(cloudState(["by": .string("first")]))  // 1
        _ = try first.append(entries(["a": .integer(1)]))
        try second.save(cloudState(["by": .string("second")]))  // 2, without "a"
        _ = try first.append(entries(["b": .integer(1)]))  // the first writer sees save 2 in the headers
        let loaded = try #require(try CloudLocalCopy(fileURL: file).load())
        #expect(loaded.values == ["by": .string("second"), "b": .integer(1)], "\(loaded.values)")
    }

    /// A journal removed between appends is created again by the next one; one moved away (another file
    /// put at its path) is left alone from the next whole save on, and the records after it go to the file
    /// at the journal's path.
    @Test func aJournalRemovedOrMovedAwayIsWrittenAtItsPathAgain() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["a": .integer(1)]))  // 1: records go to journal 1
        _ = try copy.append(entries(["b": .integer(1)]))
        let journal = copy.journalPath(1)
        try FileManager.default.removeItem(atPath: journal)
        _ = try copy.append(entries(["c": .integer(1)]))
        #expect(FileManager.default.fileExists(atPath: journal), "the append after the removal went nowhere")
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load()?.values == ["a": .integer(1), "c": .integer(1)])

        let moved = journal + ".moved"
        try FileManager.default.moveItem(atPath: journal, toPath: moved)
        #expect(FileManager.default.createFile(atPath: journal, contents: Data()), "another file at the journal's path")
        try copy.save(cloudState(["a": .integer(1), "c": .integer(1)]))  // 2: finds journal 1 moved away
        try copy.save(cloudState(["a": .integer(1), "c": .integer(2)]))  // 3: records go to journal 1 again
        let movedBefore = try Data(contentsOf: URL(fileURLWithPath: moved))
        _ = try copy.append(entries(["d": .integer(1)]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == movedBefore, "a record went to the moved file")
        #expect(
            try CloudLocalCopy(fileURL: copy.fileURL).load()?.values == [
                "a": .integer(1), "c": .integer(2), "d": .integer(1)
            ])
    }

    /// A record cut short (a process killed in the middle of the append) is passed over without a word,
    /// also when a later process appended after it; a record whose bytes are all there but do not verify
    /// is damage: skipped and reported, and the records after it still load.
    @Test func aRecordCutShortIsPassedOverAndADamagedOneReported() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        try copy.save(cloudState(["base": .integer(0)]))
        _ = try copy.append(entries(["a": .integer(1)]))
        _ = try copy.append(entries(["b": .integer(2)]))
        let journal = copy.journalPath(1)
        let full = try Data(contentsOf: URL(fileURLWithPath: journal))
        let second = try #require(
            full.range(of: Data("\nobservable-defaults cloud journal record".utf8), in: 1..<full.count))
        for cut in [second.lowerBound + 3, second.lowerBound + 60, full.count - 4] {
            try full.prefix(cut).write(to: URL(fileURLWithPath: journal))
            var problems: [DefaultsError] = []
            #expect(
                try CloudLocalCopy(fileURL: copy.fileURL).load { problems.append($0) }?.values == [
                    "base": .integer(0), "a": .integer(1)
                ], "cut at \(cut)")
            #expect(problems.isEmpty, "cut at \(cut): \(problems)")
            // Another process appends after the cut: the cut is still no damage.
            let later = CloudLocalCopy(fileURL: copy.fileURL)
            _ = try later.load()
            _ = try later.append(entries(["c": .integer(3)]))
            #expect(
                try CloudLocalCopy(fileURL: copy.fileURL).load { problems.append($0) }?.values
                    == ["base": .integer(0), "a": .integer(1), "c": .integer(3)], "cut at \(cut)")
            #expect(problems.isEmpty, "cut at \(cut): \(problems)")
        }

        var damaged = full
        damaged[second.lowerBound - 3] ^= 0x01  // a byte of the first record's JSON
        try damaged.write(to: URL(fileURLWithPath: journal))
        var problems: [DefaultsError] = []
        #expect(
            try CloudLocalCopy(fileURL: copy.fileURL).load { problems.append($0) }?.values == [
                "base": .integer(0), "b": .integer(2)
            ])
        let problem = try #require(problems.first)
        #expect(
            problems.count == 1 && problem.message.contains("has 1 damaged record, skipped")
                && problem.message.contains(journal), "\(problems)")
    }

    /// A process killed in the middle of its first whole save leaves a slot cut short and no other: it is
    /// passed over without a word (the journal holds the writes); bytes that are no save at all are still
    /// damage, moved aside and reported, and the journal's writes load all the same.
    @Test func aFirstSaveCutShortIsPassedOverAndTheJournalLoads() throws {
        let copy = CloudLocalCopy(fileURL: directory.file("copy.json"))
        _ = try copy.append(entries(["a": .integer(1)]))
        let slot = URL(fileURLWithPath: copy.slotPath(1))
        let save = CloudLocalCopySlot.bytes(
            sequence: 1, content: JSONWriter.encodeSuite(CloudLocalCopy.encode(cloudState(["a": .integer(1)]))),
            paddingTo: 0)
        for cut in [0, 10, CloudLocalCopySlot.headerPrefix.utf8.count + 30, save.count - 5] {
            try Data(save.prefix(cut)).write(to: slot)
            var problems: [DefaultsError] = []
            #expect(
                try CloudLocalCopy(fileURL: copy.fileURL).load { problems.append($0) }?.values == ["a": .integer(1)],
                "cut at \(cut)")
            #expect(problems.isEmpty, "cut at \(cut): \(problems)")
            #expect(FileManager.default.fileExists(atPath: slot.path), "cut at \(cut): moved aside")
        }
        try Data("{ broken".utf8).write(to: slot)
        var problems: [DefaultsError] = []
        #expect(try CloudLocalCopy(fileURL: copy.fileURL).load { problems.append($0) }?.values == ["a": .integer(1)])
        #expect(problems.count == 1 && problems.first?.message.contains("local copy is damaged") == true, "\(problems)")
        #expect(FileManager.default.fileExists(atPath: slot.path + ".broken"))
    }

    /// A start that finds several problems reports each of them (on topics of their own), and loads what
    /// can be loaded: a slot that cannot be read and a journal that cannot be read are moved aside, a
    /// damaged record is skipped, and the other slot and records load.
    @Test func everyProblemFoundAtStartIsReported() throws {
        let state = directory.file("troubled")
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        try copy.save(cloudState(["a": .integer(1)]))  // 1: slot 1
        try copy.save(cloudState(["a": .integer(2)]))  // 2: slot 0; records go to journal 0
        _ = try copy.append(entries(["b": .integer(1)]))
        _ = try copy.append(entries(["c": .integer(1)]))
        var journal = try Data(contentsOf: URL(fileURLWithPath: copy.journalPath(0)))
        // the first record's key
        journal[journal.firstRange(of: Data("\"b\"".utf8))!.lowerBound + 1] = UInt8(ascii: "x")
        try journal.write(to: URL(fileURLWithPath: copy.journalPath(0)))
        for unreadable in [copy.slotPath(1), copy.journalPath(1)] {
            try? FileManager.default.removeItem(atPath: unreadable)
            try FileManager.default.createDirectory(atPath: unreadable, withIntermediateDirectories: false)
        }

        let store = CloudKeyValueStore.localOnly(directory: state)
        #expect(store.values() == ["a": .integer(2), "c": .integer(1)])
        let problems = store.currentErrors.map(\.message).filter { $0.contains("local copy") }
        #expect(problems.count == 3, "\(problems)")
        #expect(
            problems.contains { $0.contains(copy.slotPath(1)) && $0.contains("the store starts from the other slot") })
        #expect(
            problems.contains {
                $0.contains(copy.journalPath(1)) && $0.contains("the writes recorded in it are not loaded")
            })
        #expect(problems.contains { $0.contains("journal \(copy.journalPath(0)) has 1 damaged record, skipped") })
        #expect(
            FileManager.default.fileExists(atPath: copy.slotPath(1) + ".unread")
                && FileManager.default.fileExists(atPath: copy.journalPath(1) + ".unread"))
    }

    /// A local write costs one short append whatever the size of the store; the whole save follows within
    /// the bookkeeping delay, and a restarted store finds the write either way.
    @Test func aWriteIsOneShortRecordAndTheWholeSaveFollowsWithinTheDelay() throws {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let copy = try #require(store.core.localCopy)
        for index in 0..<200 { store.set(String(repeating: "v", count: 500), forKey: "key\(index)") }
        store.synchronize()
        let records = copy.recordCount.withLock { $0 }

        store.set("changed", forKey: "key7")
        store.synchronize()
        #expect(copy.recordCount.withLock { $0 } == records + 1)
        // The write's record, as appended: a few hundred bytes, while a whole save is over 100 KB.
        let appended = [0, 1].compactMap { FileManager.default.contents(atPath: copy.journalPath($0)) }
            .flatMap { CloudLocalCopyJournal.contents(of: $0).records }
            .filter { String(decoding: $0.content, as: UTF8.self).contains("changed") }
        #expect(appended.count == 1)
        let recordBytes =
            appended.first.map { CloudLocalCopyJournal.bytes(after: $0.after, content: $0.content).count } ?? 0
        #expect(recordBytes > 0 && recordBytes < 400, "the record took \(recordBytes) bytes")
        #expect(try localCopyOnDisk(copy.fileURL)["values"]?.dictionaryValue?["key7"] == .string("changed"))

        #expect(
            eventually(timeout: .seconds(10)) {
                CloudLocalCopy(fileURL: copy.fileURL).newestSlot().map {
                    String(decoding: $0.content, as: UTF8.self).contains("changed")
                } == true
            }, "no whole save followed")
    }

    /// A process that writes in a tight loop makes whole saves sooner than the delay once its records
    /// outgrow the last save, so its journal stays small. (A value past ``CloudLocalCopy/smallWholeSaveBytes``:
    /// below it, a local write is a whole save, no record.)
    @Test func aTightLoopOfWritesKeepsTheJournalSmall() throws {
        let store = CloudKeyValueStore.localOnly(directory: directory.url)
        let copy = try #require(store.core.localCopy)
        let value = String(repeating: "x", count: CloudLocalCopy.smallWholeSaveBytes + 2000)
        for index in 0..<2000 {
            store.set("\(index) \(value)", forKey: "k")
            if index % 50 == 0 { store.synchronize() }  // one record per 50 writes at least
        }
        store.synchronize()
        let largest = [0, 1].map { size(copy.journalPath($0)) }.max() ?? 0
        #expect(largest < 3 * CloudLocalCopy.journalBytesBeforeSave, "a journal grew to \(largest) bytes")
        #expect(copy.saveCount.withLock { $0 } >= 2, "no whole save before the delay")
        #expect(copy.recordCount.withLock { $0 } > 10, "the writes were not recorded in the journal")
        #expect(try localCopyOnDisk(copy.fileURL)["values"]?.dictionaryValue?["k"] == .string("1999 \(value)"))
    }

    /// A process killed at any moment (in an append, in a whole save, while emptying a journal) loses no
    /// write it had on disk: each round's child counts on from what the last one left, and the copy always
    /// holds at least the last number a child printed (printed only once `synchronize()` returned).
    @Test func aProcessKilledAtAnyMomentKeepsEveryWriteItHadOnDisk() throws {
        let state = directory.file("counting")
        var last: Int64 = 0
        for round in 0..<12 {
            let (child, output) = try TestAgent.start(["cloud-local-count", state.path])
            let lines = LineReader(output.fileHandleForReading)
            #expect(
                lines.waitFor(timeout: .seconds(20)) { Int64($0) ?? 0 > last + 2000 },
                "round \(round): \(lines.lines.suffix(3))")
            usleep(UInt32(1000 + round * 7919 % 30000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            let printed = lines.lines.compactMap { Int64($0) }.max() ?? 0
            var problems: [DefaultsError] = []
            let loaded = try CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state)).load {
                problems.append($0)
            }
            var onDisk: Int64 = 0
            if case .integer(let number)? = loaded?.values["n"] { onDisk = Int64(number) }
            #expect(onDisk >= printed, "round \(round): \(printed) was printed, the copy has \(onDisk)")
            #expect(loaded?.values.count == 41, "round \(round): the filler keys")
            #expect(problems.isEmpty, "round \(round): \(problems)")
            print("cloud journal kill round \(round): printed \(printed), on disk \(onDisk)")
            last = max(onDisk, printed)
        }
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        let records = [0, 1].compactMap { FileManager.default.contents(atPath: copy.journalPath($0)) }
            .map { CloudLocalCopyJournal.contents(of: $0).records.count }.reduce(0, +)
        #expect(records > 0, "the writes never went to the journal: the test proves nothing about it")
    }
}
