import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A directory the system refuses to watch (the inotify watch limit): the error reaches only that
/// directory's suites, and watching is retried until it works.
///
/// The limit is a fault of the suites' own watcher (``WatchFaults``): lowering
/// `/proc/sys/fs/inotify/max_user_watches` would change the whole machine for every other process.
@Suite struct WatchLimitTests {
    let root = TemporaryDirectory()

    @Test func refusedWatchIsAttributedToItsSuiteAndRetried() throws {
        let healthyDirectory = root.url.appendingPathComponent("healthy")
        let refusedDirectory = root.url.appendingPathComponent("refused")
        try FileManager.default.createDirectory(at: healthyDirectory, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: refusedDirectory, withIntermediateDirectories: false)
        let faults = WatchFaults()
        let healthy = try faults.suite("healthy", in: healthyDirectory)
        let refused = try faults.suite("refused", in: refusedDirectory)
        let refusedPath = (refused.fileURL.path as NSString).deletingLastPathComponent
        faults.refuse(refusedPath, with: ENOSPC)

        let healthyErrors = ErrorRecorder(), refusedErrors = ErrorRecorder(), changes = ChangeRecorder()
        // The refused directory first: watching the healthy one afterwards must not blame it for that one.
        let observations = [
            refused.observeErrors { refusedErrors.record($0) },
            refused.observe { changes.record($0) },
            healthy.observeErrors { healthyErrors.record($0) },
            healthy.observe { _ in }
        ]
        defer { observations.forEach { $0.cancel() } }

        let error = try #require(refusedErrors.errors.first)
        #expect(error.errorNumber == ENOSPC)
        #expect(error.fileURL == refused.fileURL)
        #expect(error.message.contains(refusedPath))
        #expect(
            !healthyErrors.errors.contains { $0.errorNumber == ENOSPC }, "another suite's directory is not its problem")
        #expect(refused.currentErrors == [error])

        // The limit is raised: the retry watches the directory, the error clears, changes arrive.
        faults.allow(refusedPath)
        #expect(eventually { faults.watcher.watchedDirectories.contains(refusedPath) })
        #expect(eventually { refused.currentErrors.isEmpty })
        #expect(try TestAgent.run(["set", refused.fileURL.path, "late", "int:1"]) == 0)
        #expect(changes.waitFor(key: "late"))
        #expect(refusedErrors.errors.count == 1, "reported once, not on every retry")
    }

    @Test func failedReaderIsReportedAndRestarted() throws {
        let faults = WatchFaults()
        let suite = try faults.suite("reader", in: root.url)
        let changes = ChangeRecorder(), errors = ErrorRecorder()
        let observations = [suite.observe { changes.record($0) }, suite.observeErrors { errors.record($0) }]
        defer { observations.forEach { $0.cancel() } }
        faults.failNextRead()
        #expect(eventually { errors.errors.contains { $0.message.contains("watching for outside changes failed") } })
        #expect(try TestAgent.run(["set", suite.fileURL.path, "after", "int:1"]) == 0)
        #expect(changes.waitFor(key: "after"))
    }
}
