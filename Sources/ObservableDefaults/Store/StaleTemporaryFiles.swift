import Dispatch
import Foundation

/// Removes the temporary files that writers killed mid-write left behind
/// (`.<file name>.<pid>.<n>.tmp` whose process no longer exists), beside the suites and in the hidden
/// subdirectory saves write them in (``SuiteFileTemporaryDirectory``).
///
/// Finding them takes a directory listing, whose cost grows with the directory (10,000 suites in one
/// directory), so it is done once per directory per process, in the background, after the first write
/// there: no write waits for it.
enum StaleTemporaryFiles {
    private static let cleanedDirectories = Locked<Set<String>>([])

    /// Schedules the cleanup of `directory` unless this process has done it already.
    static func cleanUpOnce(in directory: String) {
        let isFirst = cleanedDirectories.withLock { $0.insert(directory).inserted }
        guard isFirst else { return }
        DispatchQueue.global(qos: .background).async { removeStale(in: directory) }
    }

    /// Removes, now, the temporary files in `directory` and in its ``SuiteFileTemporaryDirectory`` whose
    /// writer is gone.
    static func removeStale(in directory: String) {
        removeStale(directlyIn: directory)
        if let subdirectory = SuiteFileTemporaryDirectory.existing(in: directory) {
            removeStale(directlyIn: subdirectory)
        }
    }

    private static func removeStale(directlyIn directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            let fields = name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
            // "", <file name parts...>, <pid>, <n>
            guard fields.count >= 4, let pid = Int32(fields[fields.count - 2]), UInt32(fields[fields.count - 1]) != nil,
                pid > 0
            else { continue }
            // Another process may remove it first; nothing else needs to know.
            if CurrentProcess.hasEnded(pid) { try? FileSystem.removeFile(directory + "/" + name) }
        }
    }
}
