import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which directories are watched: every suite directory that exists, the nearest existing ancestor of
/// one that does not, and retries for those the system refused.
extension FileWatcher {
    /// What a change of the watched set means for suites, acted on after the state lock is released.
    struct WatchChanges {
        /// Suites whose directory is not watched now, with the reason (for their error channels).
        var failed: [(SuiteStorage, DefaultsError)] = []
        /// Suites whose directory has a new watch: their error is cleared and they are re-read, because
        /// changes made while nothing watched were not seen.
        var restored: [ObjectIdentifier] = []
        /// Which update of the watched set this is. Changes are delivered after the state lock is released,
        /// so two threads' deliveries can arrive out of order; a suite ignores one older than what it has.
        var generation: UInt64 = 0
    }

    /// Adds the watches registrations need, removes the rest, and schedules retries.
    static func updateWatches(_ state: inout State) -> WatchChanges {
        if state.descriptor < 0 { state.descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        state.generation += 1
        // A storage released while watched (it waited for its broken file) needs nothing any more.
        state.registrations = state.registrations.filter { $0.value.storage != nil }
        let needed = Set(state.registrations.values.flatMap { $0.names.map(\.directory) })
        var kept = Set<String>()
        var problems: [String: DefaultsError] = [:]
        var added = Set<String>()
        for directory in needed {
            var path = directory
            var restarts = 0
            while true {
                if let watch = state.watchDescriptors[path] {
                    if state.watchedIdentities[path] == DirectoryIdentity(path: path) {
                        kept.insert(path)
                        break
                    }
                    // Deleted or replaced, and the kernel has not said so yet: watch what is there now.
                    inotify_rm_watch(state.descriptor, watch)
                    state.watchDescriptors.removeValue(forKey: path)
                    state.directoriesByWatch.removeValue(forKey: watch)
                    state.watchedIdentities.removeValue(forKey: path)
                }
                let (watch, error) = addWatch(state.descriptor, path)
                if watch >= 0 {
                    state.watchDescriptors[path] = watch
                    state.directoriesByWatch[watch] = path
                    state.watchedIdentities[path] = DirectoryIdentity(path: path)
                    added.insert(path)
                    // The missing part may have been created before the ancestor's watch existed.
                    if path != directory && restarts < 8 && existsBelow(path, toward: directory) {
                        restarts += 1
                        path = directory
                        continue
                    }
                    kept.insert(path)
                    break
                }
                if (error == ENOENT || error == ENOTDIR) && path != "/" && !path.isEmpty {
                    path = directoryPart(of: path)
                    continue
                }
                problems[directory] = DefaultsError(
                    .fileSystem, message: "cannot watch the directory \(path) for outside changes; retrying",
                    fileURL: URL(fileURLWithPath: path), errorNumber: error)
                break
            }
            if problems[directory] == nil && path != directory {
                problems[directory] = DefaultsError(
                    .fileSystem,
                    message: "the suite's directory \(directory) does not exist (removed or moved away): outside changes are not seen until it is created again",
                    fileURL: URL(fileURLWithPath: directory), errorNumber: ENOENT)
            }
        }
        var freed = false
        for (path, watch) in state.watchDescriptors where !kept.contains(path) {
            inotify_rm_watch(state.descriptor, watch)
            state.watchDescriptors.removeValue(forKey: path)
            state.directoriesByWatch.removeValue(forKey: watch)
            state.watchedIdentities.removeValue(forKey: path)
            freed = true
        }

        var changes = WatchChanges(generation: state.generation)
        let restoredDirectories = Set(state.unwatched.keys.filter { problems[$0] == nil }).union(added.intersection(needed))
        for (id, registration) in state.registrations {
            guard let storage = registration.storage else { continue }
            let directories = Set(registration.names.map(\.directory))
            if let problem = directories.lazy.compactMap({ problems[$0] }).first {
                // Each suite hears about its own directory, under its own file's name.
                var error = problem
                error.fileURL = storage.fileURL
                changes.failed.append((storage, error))
            } else if !directories.isDisjoint(with: restoredDirectories) {
                changes.restored.append(id)
            }
        }
        state.unwatched = problems
        scheduleRetry(&state, refused: problems.values.contains { $0.errorNumber != ENOENT }, freed: freed)
        return changes
    }

    /// Retries refused watches with doubling delays, and at once when one of our watches was freed.
    private static func scheduleRetry(_ state: inout State, refused: Bool, freed: Bool) {
        guard refused else {
            state.retryAt = nil
            state.retryDelay = retryDelays.first
            return
        }
        if freed {
            state.retryAt = .now
        } else if state.retryAt == nil {
            state.retryAt = ContinuousClock.now.advanced(by: state.retryDelay)
            state.retryDelay = min(state.retryDelay * 2, retryDelays.longest)
        }
    }

    private static func addWatch(_ descriptor: Int32, _ path: String) -> (Int32, Int32) {
        if let simulated = simulatedWatchFailures.withLock({ $0[path] }) { return (-1, simulated) }
        let watch = inotify_add_watch(descriptor, path, eventMask)
        return (watch, watch < 0 ? errno : 0)
    }

    /// Whether the path component right below `ancestor` on the way to `directory` exists now.
    private static func existsBelow(_ ancestor: String, toward directory: String) -> Bool {
        let rest = directory.dropFirst(ancestor.count).split(separator: "/")
        guard let next = rest.first else { return false }
        var info = stat()
        return stat((ancestor == "/" ? "" : ancestor) + "/" + next, &info) == 0
    }

    /// Publishes and clears watch errors; returns the suites to re-read.
    func deliver(_ changes: WatchChanges) -> [ObjectIdentifier] {
        for (storage, error) in changes.failed { storage.raiseWatchError(error, generation: changes.generation) }
        for id in changes.restored {
            state.withLock { $0.registrations[id]?.storage }?.clearWatchError(generation: changes.generation)
        }
        return changes.restored
    }

    /// A watch the kernel ended (`IN_IGNORED`: the directory was deleted) or that followed its directory
    /// somewhere else (`IN_MOVE_SELF`, removed here) no longer watches the path it was added for.
    func forget(watch: Int32, remove: Bool) {
        state.withLock { state in
            guard let path = state.directoriesByWatch.removeValue(forKey: watch) else { return }
            state.watchDescriptors.removeValue(forKey: path)
            state.watchedIdentities.removeValue(forKey: path)
            if remove { inotify_rm_watch(state.descriptor, watch) }
        }
    }

    /// Re-applies the watched set (after a directory appeared or disappeared, or a retry is due).
    func refreshWatches() -> [ObjectIdentifier] {
        deliver(state.withLock { state in
            state.retryAt = nil
            return Self.updateWatches(&state)
        })
    }

    /// Whether a refused watch is due to be tried again; the time of the next retry otherwise.
    var retryAt: ContinuousClock.Instant? { state.withLock { $0.retryAt } }

    /// Replaces a failed inotify instance with a new one and watches everything again, after telling
    /// every suite (or `only` that one, for a simulated failure). Returns every registered suite, to be
    /// re-read (changes may have been missed meanwhile).
    func restart(after error: DefaultsError, reportingOnlyTo only: ObjectIdentifier? = nil) -> [ObjectIdentifier] {
        let storages = state.withLock { state in
            state.registrations.compactMap { id, registration in only == nil || only == id ? registration.storage : nil }
        }
        for storage in storages {
            var reported = error
            reported.fileURL = storage.fileURL
            storage.report(reported)
        }
        let changes = state.withLock { state -> WatchChanges in
            close(state.descriptor)
            state.descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            state.watchDescriptors = [:]
            state.directoriesByWatch = [:]
            state.watchedIdentities = [:]
            return Self.updateWatches(&state)
        }
        _ = deliver(changes)
        return state.withLock { Array($0.registrations.keys) }
    }
}
