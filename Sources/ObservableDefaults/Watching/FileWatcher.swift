import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's one inotify instance, the directories it watches, and its reader thread
/// (``WatchLoop``).
///
/// It watches **directories**, not files: editors and our own writer replace a file by renaming another
/// over it, which a watch on the file itself would lose. An event whose name is a watched suite's file
/// triggers a check of that suite (one `stat`, and a re-read plus diff only if the file really changed).
/// Symlinked suites (the Kubernetes ConfigMap layout `app.json -> ..data/app.json`) are checked on any
/// name in their directory, because the swap renames `..data`, not the file; the directory of the
/// symlink's target is watched as well.
///
/// A suite directory that does not exist (removed, moved away, not created yet) is reported on its
/// suites' error channels and its nearest existing ancestor is watched instead, until the directory
/// appears again; then it is watched, its suites are re-read and the error is cleared. A directory that
/// cannot be watched for another reason (the inotify watch limit, `ENOSPC`) is reported on its own suites
/// and retried with backoff, and at once when one of our watches is freed.
final class FileWatcher: Sendable {
    static let shared = FileWatcher()

    /// How long a suite file may stay absent, empty or unparseable (states a save passes through) before
    /// that state is applied.
    static let settleDelay: Duration = .milliseconds(500)
    /// The first and the longest wait before watching a directory that failed is tried again.
    static let retryDelays: (first: Duration, longest: Duration) = (.milliseconds(100), .seconds(5))

    struct Registration {
        weak var storage: SuiteStorage?
        /// `(directory, file name)` pairs whose events concern this suite.
        var names: Set<WatchedName>
        /// The suite file is a symlink: any event in its directory may have re-pointed it.
        var isSymlink: Bool
    }

    struct DirectoryIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
        }
    }

    struct WatchedName: Hashable {
        var directory: String
        var name: String
    }

    struct State {
        var descriptor: Int32 = -1
        /// A pipe whose read end the reader thread polls too, so other threads can wake it.
        var wakeReader: Int32 = -1
        var wakeWriter: Int32 = -1
        var threadStarted = false
        var registrations: [ObjectIdentifier: Registration] = [:]
        /// Watched paths: suite directories, and ancestors of missing ones.
        var watchDescriptors: [String: Int32] = [:]
        var directoriesByWatch: [Int32: String] = [:]
        /// The directory each path held when its watch was added. The kernel reports a deleted directory
        /// (`IN_DELETE_SELF`) only once nothing uses it any more (a file in it still open delays that), so
        /// a path whose directory is a different one, or none, is found by comparing.
        var watchedIdentities: [String: DirectoryIdentity] = [:]
        /// Suite directories that are not watched now, and why.
        var unwatched: [String: DefaultsError] = [:]
        var retryAt: ContinuousClock.Instant?
        var retryDelay = FileWatcher.retryDelays.first
        /// Work handed to the reader thread by other threads.
        var rereadAllRequested = false
        /// A simulated reader failure, reported only to this suite.
        var failureRequested: ObjectIdentifier?
        /// Counts updates of the watched set (see ``WatchChanges/generation``).
        var generation: UInt64 = 0
    }

    let state = Locked(State())

    static let eventMask = UInt32(
        IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Test hook: directories for which `inotify_add_watch` fails with the given `errno`, as if the system
    /// refused (the watch limit cannot be lowered for one process without changing the whole machine).
    static let simulatedWatchFailures = Locked<[String: Int32]>([:])

    /// Starts delivering file events for `storage`.
    func watch(_ storage: SuiteStorage) {
        let outcome = state.withLock { state -> (changes: WatchChanges, failure: DefaultsError?) in
            if let failure = startIfNeeded(&state, fileURL: storage.fileURL) {
                state.generation += 1
                return (WatchChanges(generation: state.generation), failure)
            }
            state.registrations[ObjectIdentifier(storage)] = Self.registration(for: storage)
            return (Self.updateWatches(&state), nil)
        }
        if let failure = outcome.failure {
            storage.raiseWatchError(failure, generation: outcome.changes.generation)
        } else {
            _ = deliver(outcome.changes)
        }
        wake()
    }

    /// Stops delivering file events for `storage`; directories no suite needs any more are unwatched.
    func unwatch(_ storage: SuiteStorage) {
        let changes = state.withLock { state -> WatchChanges in
            state.registrations.removeValue(forKey: ObjectIdentifier(storage))
            return Self.updateWatches(&state)
        }
        storage.clearWatchError(generation: changes.generation)
        _ = deliver(changes)
        wake()
    }

    /// The directories currently watched (for tests and diagnostics).
    var watchedDirectories: Set<String> {
        state.withLock { Set($0.watchDescriptors.keys) }
    }

    /// Makes the reader thread re-read every watched suite, as after `IN_Q_OVERFLOW` (for tests: a real
    /// overflow needs more queued events than the system limit).
    func simulateQueueOverflow() {
        state.withLock { $0.rereadAllRequested = true }
        wake()
    }

    /// Makes the reader thread act as if `poll` had failed (for tests). The restart is real; the report
    /// goes to `storage` only, so tests running in parallel on other suites do not hear about it.
    func simulateReaderFailure(reportingTo storage: SuiteStorage) {
        state.withLock { $0.failureRequested = ObjectIdentifier(storage) }
        wake()
    }

    /// Creates the inotify instance, the wake-up pipe and the reader thread the first time.
    private func startIfNeeded(_ state: inout State, fileURL: URL) -> DefaultsError? {
        if state.descriptor < 0 {
            state.descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            if state.descriptor < 0 {
                return DefaultsError(.fileSystem, message: "cannot start watching for outside changes (inotify_init1 failed)", fileURL: fileURL, errorNumber: errno)
            }
        }
        if state.wakeReader < 0 {
            var ends: [Int32] = [-1, -1]
            if pipe(&ends) != 0 {
                return DefaultsError(.fileSystem, message: "cannot start watching for outside changes (pipe failed)", fileURL: fileURL, errorNumber: errno)
            }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
            (state.wakeReader, state.wakeWriter) = (ends[0], ends[1])
        }
        if !state.threadStarted {
            state.threadStarted = true
            let thread = Thread { [self] in WatchLoop(watcher: self).run() }
            thread.name = "ObservableDefaults.FileWatcher"
            thread.start()
        }
        return nil
    }

    /// Wakes the reader thread so it takes in requests and new retry times.
    func wake() {
        let writer = state.withLock { $0.wakeWriter }
        guard writer >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }

    static func registration(for storage: SuiteStorage) -> Registration {
        let linkPath = storage.fileURL.path
        var names: Set<WatchedName> = [WatchedName(directory: directoryPart(of: linkPath), name: namePart(of: linkPath))]
        let isSymlink = Self.isSymlink(linkPath)
        if isSymlink {
            let target = SuiteFileIO.writeTarget(for: storage.fileURL).path
            names.insert(WatchedName(directory: directoryPart(of: target), name: namePart(of: target)))
        }
        return Registration(storage: storage, names: names, isSymlink: isSymlink)
    }

    static func directoryPart(of path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }

    static func namePart(of path: String) -> String {
        (path as NSString).lastPathComponent
    }

    static func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }
}
