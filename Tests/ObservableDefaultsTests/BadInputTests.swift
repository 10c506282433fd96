import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Broken files, bad names and file-system failures: a clear error, no crash, nothing lost.
@Suite struct BadInputTests {
    let directory = TemporaryDirectory()

    @Test func brokenFileKeepsLastGoodValuesAndIsNeverOverwritten() throws {
        let file = directory.file("broken.json")
        try Data("{\n  \"host\": \"localhost\",\n  \"port\": 8080\n}\n".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let changes = ChangeRecorder()
        let errors = ErrorRecorder()
        let observation = suite.observe { changes.record($0) }
        let errorObservation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel(); errorObservation.cancel() }

        // A person saves a half-edited file: the comma after line 2 is missing.
        let broken = "{\n  \"host\": \"example.org\"\n  \"port\": 9090\n}\n"
        try HandEdit.renameOver(file, broken)
        #expect(eventually { !errors.errors.isEmpty })
        let error = try #require(errors.errors.first)
        #expect(error.kind == .malformedFile)
        #expect(error.fileURL == file)
        #expect(error.line == 3, "the member after the missing comma")
        #expect(error.column == 3)
        #expect(error.message.contains("expected ',' or '}'"))
        #expect(suite.fileError == error)
        #expect(suite.string(forKey: "host") == "localhost", "last good values stay")
        #expect(suite.integer(forKey: "port") == 8080)

        // A write meanwhile stays in memory and the broken bytes are left alone.
        suite.set("debug", forKey: "level")
        #expect(suite.string(forKey: "level") == "debug")
        #expect(try String(contentsOf: file, encoding: .utf8) == broken)
        #expect(suite.hasPendingChanges)
        #expect(throws: DefaultsError.self) { try suite.flush() }

        // Once the person fixes the file, their values load and the pending write lands in the file.
        try HandEdit.renameOver(file, "{\n  \"host\": \"example.org\",\n  \"port\": 9090\n}\n")
        #expect(eventually { !suite.hasPendingChanges })
        #expect(
            try contentsOnDisk(file) == [
                "host": .string("example.org"), "port": .integer(9090), "level": .string("debug")
            ])
        #expect(suite.fileError == nil)
        #expect(suite.string(forKey: "host") == "example.org")
        #expect(errors.errors.count == 1, "one broken version is reported once")
        #expect(changes.changes.contains(DefaultsChange(keys: ["host", "port"], origin: .outside)))
    }

    @Test func suiteOpenedOnABrokenFileStartsEmptyAndReportsWhere() throws {
        let file = directory.file("truncated.json")
        try Data("{\n  \"a\": [1, 2,\n".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let error = try #require(suite.fileError)
        #expect(error.kind == .malformedFile)
        #expect(error.line == 3)
        #expect(error.description.hasPrefix("\(file.path):3:"))
        #expect(suite.storedKeys.isEmpty)
        suite.set(1, forKey: "b")
        #expect(try String(contentsOf: file, encoding: .utf8) == "{\n  \"a\": [1, 2,\n", "never overwritten")
    }

    @Test(arguments: ["", "a/b", "..", ".", "nul\u{0}char", "/etc/passwd"])
    func badSuiteNamesThrowAndCreateNothing(name: String) throws {
        let error = #expect(throws: DefaultsError.self) { try DefaultsSuite(name: name, directory: directory.url) }
        #expect(error?.kind == .invalidSuiteName)
        #expect(error?.description.contains("invalid suite name") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func dotsAreAllowedInSuiteNames() throws {
        let suite = try DefaultsSuite(name: "com.example.daemon", directory: directory.url)
        #expect(suite.fileURL.lastPathComponent == "com.example.daemon.json")
        #expect(suite.name == "com.example.daemon")
    }

    @Test func missingDirectoryIsCreatedPrivate() throws {
        let nested = directory.url.appendingPathComponent("a/b/c", isDirectory: true)
        let suite = try DefaultsSuite(name: "deep", directory: nested)
        suite.set(1, forKey: "k")
        #expect(try permissions(of: nested) == 0o700)
        #expect(try permissions(of: suite.fileURL) == 0o600)
    }

    @Test func existingPermissionsAreKept() throws {
        let file = directory.file("shared.json")
        try Data("{}".utf8).write(to: file)
        chmod(file.path, 0o644)
        let suite = try DefaultsSuite(fileURL: file)
        suite.set(1, forKey: "k")
        #expect(try permissions(of: file) == 0o644)
    }

    @Test func fileURLInAMissingDirectoryThrows() {
        let error = #expect(throws: DefaultsError.self) {
            try DefaultsSuite(fileURL: directory.url.appendingPathComponent("missing/x.json"))
        }
        #expect(error?.kind == .fileSystem)
        #expect(error?.description.contains("does not exist") == true)
    }

    @Test func aDirectoryWhereTheFileShouldBeThrows() throws {
        try FileManager.default.createDirectory(at: directory.file("dir.json"), withIntermediateDirectories: false)
        let error = #expect(throws: DefaultsError.self) { try DefaultsSuite(name: "dir", directory: directory.url) }
        #expect(error?.kind == .fileSystem)
        #expect(error?.description.contains("is a directory") == true)
    }

    @Test func aFileWhereTheDirectoryShouldBeThrows() throws {
        let notADirectory = directory.file("plain")
        try Data().write(to: notADirectory)
        let error = #expect(throws: DefaultsError.self) { try DefaultsSuite(name: "x", directory: notADirectory) }
        #expect(error?.kind == .fileSystem)
    }

    @Test func failedWriteIsReportedAndTheChangeStaysPending() throws {
        let suite = try DefaultsSuite(name: "blocked", directory: directory.url)
        suite.set(1, forKey: "a")
        // Make the sidecar lock file impossible to open (a directory in its place), even for root.
        let lockPath = directory.file(".blocked.json.lock")
        try FileManager.default.removeItem(at: lockPath)
        try FileManager.default.createDirectory(at: lockPath, withIntermediateDirectories: false)
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }

        suite.set(2, forKey: "a")
        #expect(suite.integer(forKey: "a") == 2)
        #expect(suite.hasPendingChanges)
        #expect(errors.errors.first?.kind == .fileSystem)
        #expect(errors.errors.first?.errorNumber == EISDIR)
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(1)])

        try FileManager.default.removeItem(at: lockPath)
        try suite.flush()
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(2)])
    }

    @Test func fullDiskIsReportedAndTheFileKeepsItsLastContents() throws {
        let file = directory.file("full.json")
        try Data(#"{"kept": 1}"#.utf8).write(to: file)
        // The agent writes under RLIMIT_FSIZE, the same ENOSPC-like failure a full disk gives a writer.
        let status = try TestAgent.run(["set-with-file-limit", file.path, "big", String(repeating: "x", count: 100_000)]
        )
        #expect(status == 3, "the agent exits 3 when flush reported the write error")
        #expect(try contentsOnDisk(file) == ["kept": .integer(1)])
    }

    /// A process out of file descriptors when it first observes a file: it hears why it cannot watch, and
    /// watching starts by itself once descriptors are free again (it used to stay off for good).
    @Test func watchingStartsOnceFileDescriptorsAreFreeAgain() throws {
        let file = directory.file("no-descriptors.json")
        #expect(try TestAgent.run(["set", file.path, "k", "int:0"]) == 0)
        let (agent, output) = try TestAgent.start(["watch-after-descriptor-limit", file.path])
        agent.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(
            agent.terminationStatus == 0, "exit 4: no error heard, 5: the later write was not seen; printed: \(printed)"
        )
        #expect(printed.contains("cannot watch the directory \(directory.url.path)"), "\(printed)")
        #expect(printed.contains("Too many open files"), "\(printed)")
        #expect(printed.hasSuffix("freed\nchanged\n"), "\(printed)")
    }

    private func permissions(of url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
