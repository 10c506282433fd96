import Foundation
import ObservableDefaults
import Synchronization

/// What every group gets: the run's settings and a private scratch directory.
final class BenchContext {
    let settings: RunSettings
    let root: URL
    /// A private scratch directory in `--cloud-state-directory`'s, for the local copies of the cloud group's
    /// extra propagation sides; `nil` when the option was not given.
    let cloudStateRoot: URL?

    init(settings: RunSettings, parent: URL, cloudStateParent: URL? = nil) throws {
        self.settings = settings
        func scratch(in parent: URL) -> URL {
            parent.appendingPathComponent(
                "defaults-bench-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
        }
        root = scratch(in: parent)
        cloudStateRoot = cloudStateParent.map(scratch(in:))
        // `fail` exits at once (a bad --compile-times file, a suite that cannot be opened): the scratch
        // directories go at exit then, not only at the end of a run.
        Self.scratchAtExit.withLock { $0 = scratchRoots }
        atexit {
            for root in BenchContext.scratchAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(at: root) }
        }
        for directory in scratchRoots {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    /// ``root``, and ``cloudStateRoot`` when given.
    private var scratchRoots: [URL] { [root] + (cloudStateRoot.map { [$0] } ?? []) }

    /// The scratch directories the at-exit handler removes (one context per run).
    private static let scratchAtExit = Mutex<[URL]>([])

    /// A fresh, empty directory for one benchmark.
    func directory(_ label: String) -> URL { Self.freshDirectory(label, in: root) }

    /// An empty directory `label` in `parent`, made anew.
    private static func freshDirectory(_ label: String, in parent: URL) -> URL {
        let url = parent.appendingPathComponent(label, isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Progress on standard error, so standard output stays the report.
    func progress(_ message: String) {
        FileHandle.standardError.write(Data("[defaults-bench] \(message)\n".utf8))
    }

    /// A fresh, empty directory for one benchmark in ``cloudStateRoot``; `nil` without it.
    func cloudStateDirectory(_ label: String) -> URL? { cloudStateRoot.map { Self.freshDirectory(label, in: $0) } }

    func removeScratch() {
        for root in scratchRoots { try? FileManager.default.removeItem(at: root) }
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
