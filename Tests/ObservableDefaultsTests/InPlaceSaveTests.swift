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

    @Test func truncatingToEmptyIsARealChange() throws {
        let file = directory.file("emptied.json")
        try Data("{ \"a\": 1, \"b\": 2 }".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let changes = ChangeRecorder()
        let observation = suite.observe { changes.record($0) }
        defer { observation.cancel() }
        // `: > file`: truncate and close, nothing written.
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.close()
        #expect(changes.waitFor(key: "a"))
        #expect(changes.changes == [DefaultsChange(keys: ["a", "b"], origin: .outside)])
        #expect(suite.storedKeys.isEmpty)
    }
}
