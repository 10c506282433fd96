import Foundation

/// Which directories are watched: every watched file's directory that exists, the nearest existing
/// ancestor of one that does not, and retries for those the system refused.
extension FileWatcher {
    /// What a change of the watched set means for watched files, told after the state lock is released.
    struct WatchChanges {
        /// Registrations whose directory is not watched now, with the reason, unless they were told so already.
        var failed: [(Registration, DefaultsError)] = []
        /// Registrations whose directory has a new watch: they hear that and are checked, because
        /// changes made while nothing watched were not seen.
        var restored: [WatchToken] = []
        /// Which update of the watched set this is. Changes are delivered after the state lock is released,
        /// so two threads' deliveries can arrive out of order; a receiver ignores one older than what it has.
        var generation: UInt64 = 0
    }

    /// Adds the watches registrations need, removes the rest, and schedules retries.
    static func updateWatches(_ state: inout State) -> WatchChanges {
        state.generation += 1
        // Only wakes the reader thread sooner; without it the thread still wakes for events and retries.
        if state.wakePipe == nil { state.wakePipe = try? WakePipe() }
        let needed = Set(state.registrations.values.flatMap { $0.names.map(\.directory) })
        var kept = Set<String>()
        var problems: [String: DefaultsError] = [:]
        var added = Set<String>()
        let inotify: any WatchEventSource
        do throws(SystemCallError) {
            if state.inotify == nil { state.inotify = try state.makeEventSource() }
            inotify = state.inotify!
        } catch {
            // No instance (the descriptor limit): every directory waits for the retry.
            for directory in needed {
                problems[directory] = DefaultsError(
                    error, "cannot watch the directory \(directory) for outside changes; retrying",
                    fileURL: Self.directoryURL(directory))
            }
            return finish(&state, problems: problems, added: [], needed: needed, freed: false)
        }
        for directory in needed {
            var path = directory
            var restarts = 0
            while true {
                if let watch = state.watchDescriptors[path] {
                    if state.watchedNodes[path] == FileStatus.ifPresent(at: path)?.node {
                        kept.insert(path)
                        break
                    }
                    // Deleted or replaced, and the kernel has not said so yet: watch what is there now.
                    inotify.removeWatch(watch)
                    state.watchDescriptors.removeValue(forKey: path)
                    state.directoriesByWatch.removeValue(forKey: watch)
                    state.watchedNodes.removeValue(forKey: path)
                }
                let watch: Int32
                do throws(SystemCallError) {
                    watch = try addWatch(inotify, path)
                } catch {
                    if error.errno.isMissingPath && path != "/" && !path.isEmpty {
                        path = directoryPart(of: path)
                        continue
                    }
                    problems[directory] = DefaultsError(
                        error, "cannot watch the directory \(path) for outside changes; retrying",
                        fileURL: Self.directoryURL(path))
                    break
                }
                state.watchDescriptors[path] = watch
                state.directoriesByWatch[watch] = path
                state.watchedNodes[path] = FileStatus.ifPresent(at: path)?.node
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
            if problems[directory] == nil && path != directory {
                problems[directory] = DefaultsError(
                    .fileSystem,
                    message:
                        "the suite's directory \(directory) does not exist (removed or moved away): outside changes are not seen until it is created again",
                    fileURL: Self.directoryURL(directory), errorNumber: Errno.noSuchFile.rawValue)
            }
        }
        var freed = false
        for (path, watch) in state.watchDescriptors where !kept.contains(path) {
            inotify.removeWatch(watch)
            state.watchDescriptors.removeValue(forKey: path)
            state.directoriesByWatch.removeValue(forKey: watch)
            state.watchedNodes.removeValue(forKey: path)
            freed = true
        }
        return finish(&state, problems: problems, added: added, needed: needed, freed: freed)
    }

    /// A watched directory's URL for its problems. Marked a directory rather than looked up:
    /// `URL(fileURLWithPath:)` adds a trailing slash only when a directory exists at that moment, and the
    /// same problem must compare equal before and after its directory appears (a loss is told once).
    private static func directoryURL(_ path: String) -> URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Sorts the registrations into those that lost their directory's watch (or lost it for another
    /// reason than they were told) and those that got it back, and schedules the retry of refused watches.
    private static func finish(
        _ state: inout State, problems: [String: DefaultsError], added: Set<String>, needed: Set<String>, freed: Bool
    ) -> WatchChanges {
        var changes = WatchChanges(generation: state.generation)
        let restoredDirectories = Set(state.unwatched.keys.filter { problems[$0] == nil }).union(
            added.intersection(needed))
        for (token, registration) in state.registrations {
            let directories = Set(registration.names.map(\.directory))
            if let problem = directories.lazy.compactMap({ problems[$0] }).first {
                if state.toldProblems.updateValue(problem, forKey: token) != problem {
                    changes.failed.append((registration, problem))
                }
            } else {
                state.toldProblems.removeValue(forKey: token)
                if !directories.isDisjoint(with: restoredDirectories) { changes.restored.append(token) }
            }
        }
        state.unwatched = problems
        scheduleRetry(
            &state, refused: problems.values.contains { $0.errorNumber != Errno.noSuchFile.rawValue }, freed: freed)
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

    private static func addWatch(_ inotify: any WatchEventSource, _ path: String) throws(SystemCallError) -> Int32 {
        try inotify.addWatch(path, mask: eventMask)
    }

    /// Whether the path component right below `ancestor` on the way to `directory` exists now.
    private static func existsBelow(_ ancestor: String, toward directory: String) -> Bool {
        let rest = directory.dropFirst(ancestor.count).split(separator: "/")
        guard let next = rest.first else { return false }
        return FileStatus.ifPresent(at: (ancestor == "/" ? "" : ancestor) + "/" + next) != nil
    }

    /// Tells lost and restored watches; returns the registrations to check.
    func deliver(_ changes: WatchChanges) -> [WatchToken] {
        for (registration, error) in changes.failed {
            registration.onEvent(.watchLost(error, generation: changes.generation))
        }
        for token in changes.restored {
            state.withLock { $0.registrations[token]?.onEvent }?(.watchRestored(generation: changes.generation))
        }
        return changes.restored
    }

    /// A watch the kernel ended (`IN_IGNORED`: the directory was deleted) or that followed its directory
    /// somewhere else (`IN_MOVE_SELF`, removed here) no longer watches the path it was added for.
    func forget(watch: Int32, remove: Bool) {
        state.withLock { state in
            guard let path = state.directoriesByWatch.removeValue(forKey: watch) else { return }
            state.watchDescriptors.removeValue(forKey: path)
            state.watchedNodes.removeValue(forKey: path)
            if remove { state.inotify?.removeWatch(watch) }
        }
    }

    /// Re-applies the watched set (after a directory appeared or disappeared, or a retry is due).
    func refreshWatches() -> [WatchToken] {
        deliver(
            state.withLock { state in
                state.retryAt = nil
                return Self.updateWatches(&state)
            })
    }

    /// Whether a refused watch is due to be tried again; the time of the next retry otherwise.
    var retryAt: ContinuousClock.Instant? { state.withLock { $0.retryAt } }

    /// Replaces a failed inotify instance with a new one and watches everything again, after telling
    /// every registration. Returns every registration, to be checked (changes may have been missed
    /// meanwhile).
    func restart(after error: DefaultsError) -> [WatchToken] {
        let told = state.withLock { state in state.registrations.values.map(\.onEvent) }
        for onEvent in told { onEvent(.watcherFailed(error)) }
        let changes = state.withLock { state -> WatchChanges in
            // The old instance's descriptor closes with it; a new one is made by `updateWatches`.
            state.inotify = nil
            state.watchDescriptors = [:]
            state.directoriesByWatch = [:]
            state.watchedNodes = [:]
            return Self.updateWatches(&state)
        }
        _ = deliver(changes)
        return state.withLock { Array($0.registrations.keys) }
    }
}
