import Foundation
import ObservableDefaults
import Synchronization

/// What every group gets: the run's settings and a private scratch directory.
final class BenchContext {
    let settings: RunSettings
    let root: URL

    init(settings: RunSettings, parent: URL) throws {
        self.settings = settings
        root = parent.appendingPathComponent(
            "defaults-bench-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // `fail` exits at once (a bad --compile-times file, a suite that cannot be opened): the scratch
        // directory goes at exit then, not only at the end of a run.
        Self.scratchAtExit.withLock { $0 = root }
        atexit {
            if let root = BenchContext.scratchAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(at: root) }
        }
    }

    /// The scratch directory the at-exit handler removes (one context per run).
    private static let scratchAtExit = Mutex<URL?>(nil)

    /// A fresh, empty directory for one benchmark.
    func directory(_ label: String) -> URL {
        let url = root.appendingPathComponent(label, isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Progress on standard error, so standard output stays the report.
    func progress(_ message: String) {
        FileHandle.standardError.write(Data("[defaults-bench] \(message)\n".utf8))
    }

    func removeScratch() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// Opens a suite file or ends the run with the reason (the benchmark cannot continue without it).
func openSuite(_ url: URL) -> DefaultsSuite {
    do {
        return try DefaultsSuite(fileURL: url)
    } catch {
        fail("cannot open \(url.path): \(error)")
    }
}
