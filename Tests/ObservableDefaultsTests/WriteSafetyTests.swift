import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a write keeps and refuses: read-only files, owners and modes, name lengths, temporaries left by
/// killed writers, and retries after failures that pass.
@Suite struct WriteSafetyTests {
    let directory = TemporaryDirectory()

    private func stat(_ url: URL) -> stat {
        var info = Glibc.stat()
        lstat(url.path, &info)
        return info
    }

    @Test func readOnlyFileIsNotReplacedAndTheChangeLandsOnceItIsWritable() throws {
        let file = directory.file("readonly.json")
        try Data(#"{"a": 1}"#.utf8).write(to: file)
        chmod(file.path, 0o400)
        let suite = try DefaultsSuite(fileURL: file)
        let recoveries = Locked(0)
        let observation = suite.observeWriteRecovery { recoveries.withLock { $0 += 1 } }
        defer { observation.cancel() }
        suite.set(2, forKey: "a")
        let error = try #require(suite.writeError)
        #expect(error.errorNumber == EACCES)
        #expect(error.fileURL == file)
        #expect(error.message.contains("read-only (mode 400)"))
        #expect(try contentsOnDisk(file) == ["a": .integer(1)])
        #expect(suite.integer(forKey: "a") == 2)

        chmod(file.path, 0o600)
        #expect(eventually { (try? contentsOnDisk(file)) == ["a": .integer(2)] })
        #expect(eventually { recoveries.withLock { $0 } == 1 })
        #expect(suite.writeError == nil)
        #expect(stat(file).st_mode & 0o7777 == 0o600)
    }

    @Test func transientFailureIsRetriedOnItsOwnUntilTheChangeLands() throws {
        let suite = try DefaultsSuite(name: "transient", directory: directory.url)
        suite.set(1, forKey: "a")
        // A directory where the file should be fails the write, for root too; then it goes away.
        try FileManager.default.removeItem(at: suite.fileURL)
        try FileManager.default.createDirectory(at: suite.fileURL, withIntermediateDirectories: false)
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        // Every write attempt opens the lock file. Retries run one after another: the next is scheduled by
        // the failure of the last, once that failure was reported (or not), so the fourth open from here on
        // (this write, then three retries) proves that this write and two retries have failed and been
        // handled, and are on the error channel once at most.
        let lockOpens = try FileOpenCounter(directory.file(".transient.json.lock"))
        suite.set(2, forKey: "a")
        #expect(suite.writeError?.errorNumber == EISDIR)
        #expect(lockOpens.waitFor(opens: 4), "no retry after the failed write: \(lockOpens.opens) attempts")
        #expect(errors.errors.count == 1, "\(errors.errors)")
        try FileManager.default.removeItem(at: suite.fileURL)
        #expect(eventually { (try? contentsOnDisk(suite.fileURL)) == ["a": .integer(2)] })
        #expect(eventually { suite.writeError == nil })
        #expect(!suite.hasPendingChanges)
    }

    @Test func aFailedWriteIsRetriedWhenItsDelayPassesWithTheBackoffOfRetrySchedule() throws {
        let scheduler = ManualScheduler()
        let fileURL = directory.file("backoff.json").standardizedFileURL
        let suite = DefaultsSuite(storage: try SuiteStorage(fileURL: fileURL, format: .json, scheduler: scheduler))
        suite.set(1, forKey: "a")
        // A directory where the file should be fails every write, for root too.
        try FileManager.default.removeItem(at: fileURL)
        try FileManager.default.createDirectory(at: fileURL, withIntermediateDirectories: false)
        suite.set(2, forKey: "a")
        #expect(suite.writeError?.errorNumber == EISDIR)
        #expect(scheduler.delays == [.milliseconds(50)], "one retry, after the first delay")
        // Each retry that fails schedules the next one, the delay doubling up to the longest.
        let backoff: [Duration] = [50, 100, 200, 400, 800, 1600, 2000, 2000].map { .milliseconds($0) }
        for attempt in 2...backoff.count {
            #expect(scheduler.fire() == 1)
            #expect(scheduler.delays == Array(backoff.prefix(attempt)))
            #expect(suite.hasPendingChanges)
        }
        #expect(backoff.first == RetrySchedule.firstDelay && backoff.last == RetrySchedule.maximumDelay)

        // The way is clear: the retry that is due writes the change, and no other is scheduled.
        try FileManager.default.removeItem(at: fileURL)
        #expect(scheduler.fire() == 1)
        #expect(try contentsOnDisk(fileURL) == ["a": .integer(2)])
        #expect(suite.writeError == nil)
        #expect(!suite.hasPendingChanges)
        #expect(scheduler.waitingCount == 0)

        // After a write that succeeded, the next failure waits the first delay again.
        try FileManager.default.removeItem(at: fileURL)
        try FileManager.default.createDirectory(at: fileURL, withIntermediateDirectories: false)
        suite.set(3, forKey: "a")
        #expect(scheduler.delays.last == RetrySchedule.firstDelay)
        try FileManager.default.removeItem(at: fileURL)
        #expect(scheduler.fire() == 1)
        #expect(try contentsOnDisk(fileURL) == ["a": .integer(3)])
    }

    @Test func ownerGroupAndModeOfTheReplacedFileAreKept() throws {
        try #require(geteuid() == 0, "needs root to give the file to another user")
        let file = directory.file("users.json")
        try Data(#"{"a": 1}"#.utf8).write(to: file)
        #expect(chown(file.path, 65534, 65534) == 0)
        #expect(chmod(file.path, 0o640) == 0)
        let suite = try DefaultsSuite(fileURL: file)
        suite.set(2, forKey: "a")
        #expect(suite.writeError == nil)
        #expect(try contentsOnDisk(file) == ["a": .integer(2)])
        let info = stat(file)
        #expect(info.st_uid == 65534)
        #expect(info.st_gid == 65534)
        #expect(info.st_mode & 0o7777 == 0o640)
    }

    @Test func newFilesAndDirectoriesGetExactModesWhateverTheUmask() throws {
        let suites = directory.file("made/by/umask")
        #expect(try TestAgent.run(["set-with-umask", "277", suites.path, "masked", "a", "int:1"]) == 0)
        #expect(stat(directory.file("made")).st_mode & 0o7777 == 0o700)
        #expect(stat(suites).st_mode & 0o7777 == 0o700)
        let file = suites.appendingPathComponent("masked.json")
        #expect(stat(file).st_mode & 0o7777 == 0o600)
        #expect(stat(suites.appendingPathComponent(".masked.json.lock")).st_mode & 0o7777 == 0o600)
        #expect(try contentsOnDisk(file) == ["a": .integer(1), "a-second": .string("second")])
    }

    @Test func namesWhoseFilesCannotBeWrittenAreRefused() throws {
        let longest = String(repeating: "n", count: SuiteLocation.maximumNameLength)
        for format in [SuiteFormat.json, .propertyList] {
            let suite = try DefaultsSuite(name: longest, directory: directory.url, format: format)
            suite.set(1, forKey: "a")
            #expect(suite.writeError == nil)
            #expect(try contentsOnDisk(suite.fileURL, format: format) == ["a": .integer(1)])
        }
        let error = #expect(throws: DefaultsError.self) {
            try DefaultsSuite(name: longest + "n", directory: directory.url)
        }
        #expect(error?.kind == .invalidSuiteName)
        #expect(error?.message.contains("at most 225 fit") == true)

        let longFile = directory.file(String(repeating: "f", count: 245) + ".json")
        let fileError = #expect(throws: DefaultsError.self) { try DefaultsSuite(fileURL: longFile) }
        #expect(fileError?.kind == .invalidSuiteName)
    }

    @Test func temporaryFilesOfGoneWritersAreRemovedInTheBackgroundOncePerDirectory() throws {
        // The pid of a process that has exited, and one that lives (this one).
        let gone = Process()
        gone.executableURL = TestAgent.executableURL
        gone.arguments = ["no-such-command"]
        try gone.run()
        gone.waitUntilExit()
        let stale = directory.file(".a.json.\(gone.processIdentifier).7.tmp")
        let otherSuite = directory.file(".b.json.\(gone.processIdentifier).8.tmp")
        let live = directory.file(".a.json.\(getpid()).9.tmp")
        let notOurs = directory.file(".a.json.notes.tmp")
        // Saves write their temporary files in the hidden subdirectory (SuiteFileTemporaryDirectory).
        let hidden = directory.file(SuiteFileTemporaryDirectory.name)
        try FileManager.default.createDirectory(
            at: hidden, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let staleInside = hidden.appendingPathComponent(".a.json.\(gone.processIdentifier).10.tmp")
        let liveInside = hidden.appendingPathComponent(".a.json.\(getpid()).11.tmp")
        for url in [stale, otherSuite, live, notOurs, staleInside, liveInside] {
            try Data("{\"half".utf8).write(to: url)
        }

        let suite = try DefaultsSuite(name: "a", directory: directory.url)
        suite.set(1, forKey: "a")
        #expect(
            eventually {
                [stale, otherSuite, staleInside].allSatisfy { !FileManager.default.fileExists(atPath: $0.path) }
            })
        #expect(FileManager.default.fileExists(atPath: live.path))
        #expect(FileManager.default.fileExists(atPath: liveInside.path))
        #expect(FileManager.default.fileExists(atPath: notOurs.path))
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(1)])
    }
}
