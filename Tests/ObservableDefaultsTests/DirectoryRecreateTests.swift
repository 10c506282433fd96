import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The suites directory removed, moved away or re-created under a running observer.
@Suite struct DirectoryRecreateTests {
    let root = TemporaryDirectory()

    private func observedSuite(in directory: URL) throws -> (
        DefaultsSuite, ChangeRecorder, ErrorRecorder, [DefaultsObservation]
    ) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let suite = try DefaultsSuite(name: "app", directory: directory)
        suite.set(1, forKey: "start")
        let changes = ChangeRecorder(), errors = ErrorRecorder()
        let observations = [suite.observe { changes.record($0) }, suite.observeErrors { errors.record($0) }]
        return (suite, changes, errors, observations)
    }

    private func agentSets(_ suite: DefaultsSuite, _ key: String, _ value: String) throws {
        #expect(try TestAgent.run(["set", suite.fileURL.path, key, value]) == 0)
    }

    @Test func removedAndRecreatedDirectoryIsWatchedAgain() throws {
        let directory = root.url.appendingPathComponent("suites")
        let (suite, changes, errors, observations) = try observedSuite(in: directory)
        defer { observations.forEach { $0.cancel() } }

        try FileManager.default.removeItem(at: directory)
        #expect(
            eventually { errors.errors.contains { $0.errorNumber == ENOENT } },
            "the lost watch is reported: \(errors.errors) \(FileWatcher.shared.watchedDirectories)")
        let lost = try #require(errors.errors.first { $0.errorNumber == ENOENT })
        #expect(lost.fileURL == suite.fileURL)
        #expect(lost.message.contains(directory.path))
        #expect(!suite.currentErrors.isEmpty)

        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        try agentSets(suite, "after", "int:2")
        #expect(changes.waitFor(key: "after"))
        #expect(suite.integer(forKey: "after") == 2)
        #expect(eventually { suite.currentErrors.isEmpty }, "recovery clears the error")

        // And it keeps working for the next change.
        try agentSets(suite, "again", "int:3")
        #expect(changes.waitFor(key: "again"))
    }

    @Test func nestedDirectoryRecreatedLevelByLevel() throws {
        let parent = root.url.appendingPathComponent("a")
        let directory = parent.appendingPathComponent("b/c")
        let (suite, changes, errors, observations) = try observedSuite(in: directory)
        defer { observations.forEach { $0.cancel() } }

        try FileManager.default.removeItem(at: parent)
        #expect(eventually { !errors.errors.isEmpty })
        for level in [parent, parent.appendingPathComponent("b"), directory] {
            try FileManager.default.createDirectory(at: level, withIntermediateDirectories: false)
        }
        try agentSets(suite, "after", "int:2")
        #expect(changes.waitFor(key: "after"))
        #expect(eventually { suite.currentErrors.isEmpty }, "still reported: \(suite.currentErrors)")
    }

    @Test func directoryMovedAwayAndReplacedFollowsThePath() throws {
        let directory = root.url.appendingPathComponent("suites")
        let (suite, changes, errors, observations) = try observedSuite(in: directory)
        defer { observations.forEach { $0.cancel() } }

        let moved = root.url.appendingPathComponent("suites.old")
        #expect(rename(directory.path, moved.path) == 0)
        #expect(eventually { !errors.errors.isEmpty })
        // A write into the moved directory is not this suite's file any more.
        #expect(try TestAgent.run(["set", moved.appendingPathComponent("app.json").path, "stale", "int:1"]) == 0)

        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        try agentSets(suite, "fresh", "int:2")
        #expect(changes.waitFor(key: "fresh"))
        #expect(suite.storedValue(forKey: "stale") == nil)
        #expect(!changes.changes.contains { $0.keys.contains("stale") })
    }
}
