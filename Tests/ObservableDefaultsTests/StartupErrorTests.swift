import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A suite whose file is already broken when it is opened: the error is published like any other, late
/// observers hear it, and no process loses a write to it silently.
@Suite struct StartupErrorTests {
    let directory = TemporaryDirectory()
    static let broken = "{\n  \"host\": \"localhost\"\n  \"port\": 80\n}\n"

    private func brokenSuite(_ name: String) throws -> (URL, DefaultsSuite) {
        let file = directory.file("\(name).json")
        try Data(Self.broken.utf8).write(to: file)
        return (file, try DefaultsSuite(fileURL: file))
    }

    @Test func startUpErrorIsPublishedAndNewObserversGetItAtOnce() async throws {
        let (file, suite) = try brokenSuite("startup")
        let error = try #require(suite.fileError)
        #expect(error.kind == .malformedFile)
        #expect(error.fileURL == file)
        #expect(suite.lastError == error)
        #expect(suite.currentErrors == [error])

        // The callback runs before observeErrors returns, with the error that persists now.
        let recorder = ErrorRecorder()
        let observation = suite.observeErrors { recorder.record($0) }
        #expect(recorder.errors == [error])
        observation.cancel()

        // The asynchronous sequence starts with it too.
        var iterator = suite.errors().makeAsyncIterator()
        #expect(await iterator.next() == error)
    }

    @Test func healthySuiteGivesNewObserversNothing() throws {
        let file = directory.file("healthy.json")
        try Data("{ \"a\": 1 }".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let recorder = ErrorRecorder()
        let observation = suite.observeErrors { recorder.record($0) }
        defer { observation.cancel() }
        #expect(recorder.errors.isEmpty)
        #expect(suite.currentErrors.isEmpty)
    }

    @Test func anotherProcessSettingOnABrokenSuiteFailsLoudly() throws {
        let (file, _) = try brokenSuite("second")
        // A process that flushes: non-zero exit and the reason on standard error.
        let flushing = try runAgent(["set", file.path, "level", "debug"])
        #expect(flushing.status != 0)
        #expect(flushing.standardError.contains(file.path))
        // A naive process that sets and exits: the lost change is named on standard error at exit.
        let naive = try runAgent(["set-and-exit", file.path, "level", "debug"])
        #expect(naive.standardError.contains("could not be written"), "\(naive.standardError)")
        #expect(naive.standardError.contains("'level'"))
        #expect(naive.standardError.contains(file.path))
        #expect(naive.standardError.contains(":3:3: error: expected ',' or '}'"), "the parse error says where")
        #expect(try String(contentsOf: file, encoding: .utf8) == Self.broken, "never overwritten")
    }

    @Test func pendingWritesLandOnceTheFileIsFixedWithoutAnyObserver() throws {
        let (file, suite) = try brokenSuite("fixed")
        suite.set("debug", forKey: "level")
        #expect(suite.hasPendingChanges)
        #expect(throws: DefaultsError.self) { try suite.flush() }
        try HandEdit.renameOver(file, "{ \"host\": \"example.org\" }")
        #expect(eventually { !suite.hasPendingChanges })
        #expect(try contentsOnDisk(file) == ["host": .string("example.org"), "level": .string("debug")])
        #expect(suite.currentErrors.isEmpty)
        #expect(
            eventually { !FileWatcher.shared.watchedDirectories.contains(directory.url.path) },
            "watching ends with the wait")
    }

    private func runAgent(_ arguments: [String]) throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = TestAgent.executableURL
        process.arguments = arguments
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errorPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
