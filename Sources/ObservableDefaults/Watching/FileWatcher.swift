import Foundation

/// The process's one inotify instance, the directories it watches, and its reader thread
/// (``WatchLoop``): a service that knows paths and callbacks, nothing about suites.
///
/// It watches **directories**, not files: editors and our own writer replace a file by renaming another
/// over it, which a watch on the file itself would lose. An event whose name is a watched file triggers
/// ``WatchEvent/fileMayHaveChanged(gate:)`` for it. Symlinked files (the Kubernetes ConfigMap layout
/// `app.json -> ..data/app.json`) are told on any name in their directory, because the swap renames
/// `..data`, not the file; the directory of the symlink's target is watched as well.
///
/// A watched file's directory that does not exist (removed, moved away, not created yet) is reported as
/// ``WatchEvent/watchLost(_:generation:)`` (once per reason, not on every update of the watched set) and
/// its nearest existing ancestor is watched instead, until the directory appears again; then it is
/// watched, and its files hear ``WatchEvent/watchRestored(generation:)`` and are checked. A directory that
/// cannot be watched for another reason (the inotify watch limit, `ENOSPC`; no inotify instance at all,
/// `EMFILE`) is reported to its own files and retried with backoff, and at once when one of our watches
/// is freed. A failure of the thread itself (`poll`, `read`) is reported to every file as
/// ``WatchEvent/watcherFailed(_:)``, and a new inotify instance takes over.
final class FileWatcher: Sendable {
    /// The process's watcher: its one inotify instance.
    static let shared = FileWatcher()

    /// How long a watched file may stay absent, empty or unparseable (states a save passes through) before
    /// that state is applied.
    static let settleDelay: Duration = .milliseconds(500)
    /// The first and the longest wait before watching a directory that failed is tried again.
    static let retryDelays: (first: Duration, longest: Duration) = (.milliseconds(100), .seconds(5))

    struct Registration {
        /// The watched file's path, as given.
        var file: String
        var onEvent: @Sendable (WatchEvent) -> Void
        /// `(directory, file name)` pairs whose events concern this file.
        var names: Set<WatchedName>
        /// The file is a symlink: any event in its directory may have re-pointed it.
        var isSymlink: Bool
    }

    struct WatchedName: Hashable {
        var directory: String
        var name: String
    }

    struct State {
        /// Makes the event source: the first time, and again after the reader thread fails.
        let makeEventSource: @Sendable () throws(SystemCallError) -> any WatchEventSource
        /// Replaced by a new instance after the reader thread fails; `nil` while none could be made.
        var inotify: (any WatchEventSource)?
        /// Polled by the reader thread too, so other threads can wake it.
        var wakePipe: WakePipe?
        var threadStarted = false
        var nextToken: UInt64 = 0
        var registrations = WatchRegistrations()
        /// Watched paths: watched files' directories, and ancestors of missing ones.
        var watchDescriptors: [String: Int32] = [:]
        var directoriesByWatch: [Int32: String] = [:]
        /// The directory each path held when its watch was added. The kernel reports a deleted directory
        /// (`IN_DELETE_SELF`) only once nothing uses it any more (a file in it still open delays that), so
        /// a path whose directory is a different one, or none, is found by comparing.
        var watchedNodes: [String: FileStatus.Node] = [:]
        /// Watched files' directories that are not watched now, and why.
        var unwatched: [String: DefaultsError] = [:]
        /// What each registration was last told is wrong with its directory's watch, so an update of the
        /// watched set tells only news: another file's `watch` or a retry does not repeat the same loss.
        var toldProblems: [WatchToken: DefaultsError] = [:]
        var retryAt: ContinuousClock.Instant?
        var retryDelay = FileWatcher.retryDelays.first
        /// Counts updates of the watched set (see ``WatchChanges/generation``).
        var generation: UInt64 = 0
    }

    let state: Locked<State>

    /// A watcher whose events come from the sources `makeEventSource` makes (the first one when a file is
    /// first watched, another after a failure of the reader thread); by default an inotify instance each.
    /// Production code uses ``shared``: one instance per process.
    init(makeEventSource: @escaping @Sendable () throws(SystemCallError) -> any WatchEventSource = { try Inotify() }) {
        state = Locked(State(makeEventSource: makeEventSource))
    }

    static let eventMask: Inotify.Mask = [
        .closedAfterWriting, .modified, .movedTo, .movedFrom, .created, .deleted, .attributesChanged,
        .deletedSelf, .movedSelf, .onlyDirectory
    ]

    /// Starts telling `onEvent` about the file at `file` (see ``WatchEvent``). `onEvent` may be called
    /// before this returns (a directory that cannot be watched), and must not call back into the watcher.
    func watch(file: String, onEvent: @escaping @Sendable (WatchEvent) -> Void) -> WatchToken {
        let (token, changes) = state.withLock { state -> (WatchToken, WatchChanges) in
            state.nextToken += 1
            let token = WatchToken(id: state.nextToken)
            state.registrations[token] = Self.registration(file: file, onEvent: onEvent)
            startIfNeeded(&state)
            // Without an inotify instance (the descriptor limit) the file hears why, and the reader thread
            // retries until one can be made: watching starts then.
            return (token, Self.updateWatches(&state))
        }
        _ = deliver(changes)
        wake()
        return token
    }

    /// Stops telling the registration of `token`; directories no file needs any more are unwatched.
    /// Its callback hears ``WatchEvent/watchRestored(generation:)``: nothing is lost for it any more.
    func unwatch(_ token: WatchToken) {
        let (removed, changes) = state.withLock { state in
            state.toldProblems.removeValue(forKey: token)
            return (state.registrations.removeValue(forKey: token), Self.updateWatches(&state))
        }
        removed?.onEvent(.watchRestored(generation: changes.generation))
        _ = deliver(changes)
        wake()
    }

    /// The directories watched now.
    var watchedDirectories: Set<String> {
        state.withLock { Set($0.watchDescriptors.keys) }
    }

    /// Starts the reader thread the first time. The inotify instance and the wake-up pipe are made by
    /// ``updateWatches(_:)``, and made again there after a failure (until then the thread wakes on its
    /// retry timer).
    private func startIfNeeded(_ state: inout State) {
        guard !state.threadStarted else { return }
        state.threadStarted = true
        let thread = Thread { [self] in WatchLoop(watcher: self).run() }
        thread.name = "ObservableDefaults.FileWatcher"
        thread.start()
    }

    /// Wakes the reader thread so it takes in requests and new retry times.
    func wake() {
        // A pipe that cannot be written (it is full, or gone) has nobody waiting to be woken by it.
        try? state.withLock { $0.wakePipe }?.wake()
    }

    /// Which names concern the file at `file`: its own, and for a symlink its target's too. A path ending
    /// in `/` is a directory whose every name concerns it (a key-per-file layer's volume), as a symlink's
    /// directory does.
    static func registration(file: String, onEvent: @escaping @Sendable (WatchEvent) -> Void) -> Registration {
        if file.count > 1, file.hasSuffix("/") {
            let directory = String(file.dropLast())
            return Registration(
                file: file, onEvent: onEvent, names: [WatchedName(directory: directory, name: "")], isSymlink: true)
        }
        var names: Set<WatchedName> = [WatchedName(directory: directoryPart(of: file), name: namePart(of: file))]
        let isSymlink = FileSystem.isSymlink(file)
        if isSymlink {
            let target = FileSystem.symlinkTarget(of: file)
            names.insert(WatchedName(directory: directoryPart(of: target), name: namePart(of: target)))
        }
        return Registration(file: file, onEvent: onEvent, names: names, isSymlink: isSymlink)
    }

    static func directoryPart(of path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }

    static func namePart(of path: String) -> String {
        (path as NSString).lastPathComponent
    }
}
