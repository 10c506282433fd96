import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Truncate-then-write saves (nano, `cp`, shell `>`): a file a writer still holds open is not a change.
@Suite struct InPlaceSaveTests {
    let directory = TemporaryDirectory()

    @Test func halfWrittenFilesAreNeverApplied() throws {
        let file = directory.file("inplace.json")
        try Data("{ \"constant\": \"kept\", \"counter\": 0, \"other\": [1, 2, 3] }".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let changes = ChangeRecorder(), errors = ErrorRecorder()
        let counters = Locked<[Int]>([])
        let observation = suite.observe { change in
            changes.record(change)
            if change.keys.contains("counter") {
                counters.withLock { $0.append(suite.integer(forKey: "counter")) }
            }
        }
        let errorObservation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel(); errorObservation.cancel() }

        let saves = 200
        let (process, output) = try TestAgent.start(["in-place-saves", file.path, String(saves), "2000"])
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(eventually { suite.integer(forKey: "counter") == saves })

        #expect(
            !changes.changes.contains { $0.keys.contains("constant") || $0.keys.contains("other") },
            "no key was ever seen removed")
        #expect(
            !errors.errors.contains { $0.kind == .malformedFile },
            "a half-written file is not reported as broken: \(errors.errors)")
        let seen = counters.withLock { $0 }
        #expect(seen == seen.sorted() && Set(seen).count == seen.count, "each save delivered once, in order: \(seen)")
        #expect(suite.storedValue(forKey: "constant") == .string("kept"))
    }

    @Test func truncatingToEmptyIsARealChangeAndAProblemUntilTheFileHoldsASuiteAgain() throws {
        let file = directory.file("emptied.json")
        try Data("{ \"a\": 1, \"b\": 2 }".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let changes = ChangeRecorder()
        let events = ErrorEventRecorder()
        let observations = [suite.observe { changes.record($0) }, suite.observeErrorEvents { events.record($0) }]
        defer { observations.forEach { $0.cancel() } }
        // `: > file`: truncate and close, nothing written.
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.close()
        #expect(changes.waitFor(key: "a"))
        #expect(changes.changes == [DefaultsChange(keys: ["a", "b"], origin: .outside)])
        #expect(suite.storedKeys.isEmpty)
        #expect(eventually { events.occurred.count == 1 })
        let empty = try #require(events.occurred.first)
        #expect(empty.kind == .malformedFile && empty.fileURL == file)
        #expect(empty.message.contains("the suite file is empty: every key reads its default"), "\(empty)")
        #expect(suite.currentErrors == [empty])

        try HandEdit.renameOver(file, "{ \"a\": 3 }")
        #expect(eventually { suite.integer(forKey: "a") == 3 && events.recovered == [empty] })
        #expect(suite.currentErrors.isEmpty)
        // A marker that comes back through the watcher: every event of the refill has arrived by then.
        try HandEdit.renameOver(file, "{ \"a\": 4 }")
        #expect(eventually { suite.integer(forKey: "a") == 4 })
        #expect(events.events.count == 2, "one problem, one recovery: \(events.events)")
    }

    @Test(arguments: ["app.json", "app.plist"])
    func aSuiteOpenedOnAnEmptyFileSaysSoAndItsFirstWriteEndsIt(name: String) throws {
        let file = directory.file(name)
        try Data().write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        #expect(
            suite.currentErrors.map(\.message).contains { $0.contains("the suite file is empty") },
            "\(suite.currentErrors)")
        let events = ErrorEventRecorder()
        let observation = suite.observeErrorEvents { events.record($0) }
        defer { observation.cancel() }
        #expect(events.occurred.count == 1, "a new observer hears the problem at once")
        suite.set(7, forKey: "workers")
        #expect(events.recovered == events.occurred, "the write filled the file: \(events.events)")
        #expect(suite.currentErrors.isEmpty)
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("workers"))
    }
}
