import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// `update(forKey:_:)`: a read-modify-write of one key under the cross-process lock.
@Suite struct AtomicUpdateTests {
    let directory = TemporaryDirectory()

    @Test func eightProcessesIncrementingOneKeyLoseNothing() throws {
        let file = directory.file("counter.json")
        let processes = 8
        let increments = 60
        let statuses = try TestAgent.runTogether(
            Array(repeating: ["increment", file.path, "count", String(increments)], count: processes))
        #expect(statuses == Array(repeating: 0, count: processes))
        #expect(try contentsOnDisk(file)["count"] == .integer(processes * increments))
    }

    @Test func updateSeesWhatAnotherProcessWroteAndNotifiesOnce() throws {
        let suite = try DefaultsSuite(name: "update", directory: directory.url)
        suite.set(1, forKey: "count")
        // Another process changes the key; this process has not read the file since.
        #expect(try TestAgent.run(["set", suite.fileURL.path, "count", "int:10"]) == 0)
        let recorder = ChangeRecorder()
        let observation = suite.observe(scope: .thisProcess) { recorder.record($0) }
        defer { observation.cancel() }

        let stored = try suite.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 }
        #expect(stored == 11)
        #expect(suite.integer(forKey: "count") == 11)
        #expect(try contentsOnDisk(suite.fileURL) == ["count": .integer(11)])
        #expect(recorder.changes == [DefaultsChange(keys: ["count"], origin: .thisProcess)])
    }

    @Test func updateIncludesPendingChangesAndNilRemoves() throws {
        let suite = try DefaultsSuite(name: "pending", directory: directory.url)
        try suite.performBatchUpdates {
            suite.set(5, forKey: "count")
            suite.set("x", forKey: "other")
            // The batch's pending value is what the transform sees; everything lands in one write.
            let seen = Locked<DefaultsValue?>(nil)
            try suite.update(forKey: "count") { current in
                seen.withLock { $0 = current }
                return nil
            }
            #expect(seen.withLock { $0 } == .integer(5))
            #expect(try contentsOnDisk(suite.fileURL) == ["other": .string("x")])
        }
        #expect(suite.storedValue(forKey: "count") == nil)
        #expect(!suite.hasPendingChanges)
    }

    @Test func failedUpdateChangesNothing() throws {
        let suite = try DefaultsSuite(name: "failing", directory: directory.url)
        suite.set(1, forKey: "count")
        let lockPath = directory.file(".failing.json.lock")
        try FileManager.default.removeItem(at: lockPath)
        try FileManager.default.createDirectory(at: lockPath, withIntermediateDirectories: false)
        #expect(throws: DefaultsError.self) { try suite.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } }
        #expect(suite.integer(forKey: "count") == 1)
        #expect(!suite.hasPendingChanges)
        #expect(try contentsOnDisk(suite.fileURL) == ["count": .integer(1)])
    }
}
