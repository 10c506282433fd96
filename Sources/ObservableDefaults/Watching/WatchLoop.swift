import Foundation

/// The reader thread of ``FileWatcher``: reads inotify events, decides which watched files to check, and
/// tells their owners (``WatchEvent/fileMayHaveChanged(gate:)``). Everything here is touched by that thread
/// only. "Suite" below means a watched file's registration.
///
/// **In-place saves.** A save that truncates the file and writes into it (nano, `cp`, shell `>`) shows
/// the file empty or half written for a while. A modification (`IN_MODIFY`) marks the suite as being
/// written until the writer closes the file (`IN_CLOSE_WRITE`); a suite being written is not read. A read
/// during which a modification arrived is dropped (the writer's close reads again). An absent, empty or
/// unparseable file (states a save passes through: also delete-then-recreate) is applied only once it
/// stayed so for ``FileWatcher/settleDelay`` with no event for the file; then it is a real change
/// (`: > file` empties the suite, a broken file is reported).
final class WatchLoop {
    private let watcher: FileWatcher
    /// Suites whose file was modified in place and not closed since.
    private var writing = Set<WatchToken>()
    /// Per suite: how many in-place modifications were seen (a read is valid only if none arrived
    /// during it), and how many events of any kind (a settled state is applied only if none arrived).
    private var modifications: [WatchToken: UInt64] = [:]
    private var events: [WatchToken: UInt64] = [:]
    /// Suites whose file was read absent, empty or unparseable: when to apply that, if no event came.
    private var settling: [WatchToken: (deadline: ContinuousClock.Instant, events: UInt64)] = [:]
    /// Suites to check.
    private var due = Set<WatchToken>()
    private var refreshNeeded = false
    /// When to check that watched directories are still there: a while after a name in one was deleted
    /// or moved away (its own deletion may be the next step, reported late or not at all).
    private var verifyAt: ContinuousClock.Instant?
    private let buffer: UnsafeMutableRawBufferPointer

    init(watcher: FileWatcher) {
        self.watcher = watcher
        buffer = .allocate(byteCount: 64 * 1024, alignment: MemoryLayout<UInt32>.alignment)
    }

    deinit { buffer.deallocate() }

    func run() {
        while true {
            let (inotify, wakePipe, retryAt) = watcher.state.withLock { ($0.inotify, $0.wakePipe, $0.retryAt) }
            // Either may be missing (the descriptor limit): they are made again by `refreshWatches` when a
            // retry is due (the watched directories are reported as refused meanwhile).
            let pollable = [inotify?.pollable ?? -1, wakePipe?.pollable ?? -1]
            let ready: [Bool]
            do {
                ready = try Poll.readable(pollable, timeout: timeout(retryAt: retryAt))
            } catch {
                recover(error)
                continue
            }
            if ready[1] {
                do { try wakePipe?.drain() } catch { recover(error) }
            }
            if let inotify {
                do {
                    try drainEvents(inotify)
                } catch {
                    recover(error)
                    continue
                }
            }
            takeRequests()
            if refreshNeeded {
                refreshNeeded = false
                due.formUnion(watcher.refreshWatches())
                forgetUnregistered()
            }
            let now = ContinuousClock.now
            for (id, settle) in settling where settle.deadline <= now {
                settling.removeValue(forKey: id)
                // An event since has scheduled its own check.
                if events[id, default: 0] == settle.events { check(id, acceptSuspect: true) }
            }
            while let id = due.popFirst() { check(id, acceptSuspect: false) }
        }
    }

    /// Drops what is kept about suites that are no longer watched.
    private func forgetUnregistered() {
        let registered = Set(watcher.state.withLock { $0.registrations.keys })
        writing.formIntersection(registered)
        modifications = modifications.filter { registered.contains($0.key) }
        events = events.filter { registered.contains($0.key) }
        settling = settling.filter { registered.contains($0.key) }
    }

    /// Milliseconds until the next settle deadline or retry; 0 when work is waiting; -1 for none.
    private func timeout(retryAt: ContinuousClock.Instant?) -> Int32 {
        if refreshNeeded || !due.isEmpty { return 0 }
        guard let earliest = (settling.values.map(\.deadline) + [retryAt, verifyAt].compactMap { $0 }).min() else {
            return -1
        }
        let remaining = ContinuousClock.now.duration(to: earliest)
        if remaining <= .zero { return 0 }
        let milliseconds =
            remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
        return Int32(min(milliseconds, 1000))
    }

    /// A retry that is due, and a check of the watched directories that is due.
    private func takeRequests() {
        let retryDue = watcher.state.withLock { state in state.retryAt.map { $0 <= .now } ?? false }
        if retryDue { refreshNeeded = true }
        if let verifyAt, verifyAt <= .now {
            self.verifyAt = nil
            refreshNeeded = true
        }
    }

    /// A failed `poll` or `read` must not end watching silently: every watched file hears about it, and a
    /// new inotify instance takes over (everything is checked, as changes may have been missed).
    private func recover(_ failure: SystemCallError) {
        let error = DefaultsError(failure, "watching for outside changes failed; restarted the watch", fileURL: nil)
        eventsWereLost()
        due.formUnion(watcher.restart(after: error))
    }

    /// Reads and classifies every queued event.
    private func drainEvents(_ inotify: any WatchEventSource) throws(SystemCallError) {
        try inotify.drainEvents(into: buffer) { handle($0) }
    }

    private func overflowed() {
        due.formUnion(watcher.state.withLock { Array($0.registrations.keys) })
        eventsWereLost()
        // Events about our directories themselves may have been lost too.
        refreshNeeded = true
    }

    /// Events were lost (an overflow, a restart): any of them may have been a modification or a close. A read
    /// under way is dropped and a suite left to settle starts over, as if each had an event: otherwise a
    /// settle period begun before the loss would apply the file as it is when the period ends, perhaps
    /// half-written by a save whose events were lost.
    private func eventsWereLost() {
        // A lost close would leave a suite marked as being written for good.
        writing.removeAll()
        for id in watcher.state.withLock({ Array($0.registrations.keys) }) {
            modifications[id, default: 0] += 1
            events[id, default: 0] += 1
        }
    }

    private func handle(_ event: Inotify.Event) {
        let (watch, mask, name) = (event.watch, event.mask, event.name)
        if mask.contains(.queueOverflowed) { return overflowed() }
        if !mask.isDisjoint(with: [.watchEnded, .deletedSelf, .movedSelf]) {
            // The directory is gone or elsewhere: watch its nearest existing ancestor until it is back.
            watcher.forget(watch: watch, remove: mask.contains(.movedSelf))
            refreshNeeded = true
            return
        }
        let (directory, exact, others, waitingForDirectories) = watcher.state.withLock {
            state -> (String, [WatchToken], [WatchToken], Bool) in
            guard let directory = state.directoriesByWatch[watch] else { return ("", [], [], false) }
            let (exact, others) = state.registrations.concerned(
                by: FileWatcher.WatchedName(directory: directory, name: name))
            return (directory, exact, others, !state.unwatched.isEmpty)
        }
        if waitingForDirectories && mask.contains(.isDirectory) && !mask.isDisjoint(with: [.created, .movedTo]) {
            refreshNeeded = true
        }
        if !mask.isDisjoint(with: [.deleted, .movedFrom]) && !directory.isEmpty {
            verifyAt = ContinuousClock.now.advanced(by: FileWatcher.settleDelay)
        }
        for id in exact + others { events[id, default: 0] += 1 }
        if mask.contains(.modified) {
            for id in exact {
                modifications[id, default: 0] += 1
                writing.insert(id)
            }
        }
        if !mask.isDisjoint(with: [.closedAfterWriting, .movedTo, .deleted, .movedFrom]) {
            // Closed, or another file (or none) is in place now.
            for id in exact { writing.remove(id) }
        }
        let finishing: Inotify.Mask = [.closedAfterWriting, .movedTo, .attributesChanged, .deleted, .movedFrom]
        // Names no one watches (a writer's temporary file) end here, without an `lstat`.
        if exact.isEmpty && others.isEmpty { return }
        if !mask.isDisjoint(with: finishing)
            || (mask.contains(.created) && FileSystem.isSymlink(directory + "/" + name))
        {
            due.formUnion(exact)
            due.formUnion(others)
        }
        // A regular file being created is read when its writer closes it (IN_CLOSE_WRITE).
    }

    /// Tells the owner of one watched file to check it, unless a writer is busy with it, and follows a
    /// re-pointed symlink to its new directory.
    private func check(_ token: WatchToken, acceptSuspect: Bool) {
        guard !writing.contains(token), let onEvent = watcher.state.withLock({ $0.registrations[token]?.onEvent })
        else { return }
        let modificationsBefore = modifications[token, default: 0]
        onEvent(
            .fileMayHaveChanged { [self] suspect in
                // Take in what happened while the file was read.
                if let inotify = watcher.state.withLock({ $0.inotify }) {
                    // A failed read here is seen again, and recovered from, by the loop's own read.
                    try? drainEvents(inotify)
                }
                if modifications[token, default: 0] != modificationsBefore {
                    // Read while a writer was busy: its close (or a check already due) reads again.
                    if !writing.contains(token) { due.insert(token) }
                    return false
                }
                if suspect && !acceptSuspect {
                    settling[token] = (
                        ContinuousClock.now.advanced(by: FileWatcher.settleDelay), events[token, default: 0]
                    )
                    return false
                }
                // A suite read whole no longer waits to settle in an earlier state.
                if !suspect { settling[token] = nil }
                return true
            })
        let changes = watcher.state.withLock { state -> FileWatcher.WatchChanges? in
            guard let old = state.registrations[token], old.isSymlink || old.names.count > 1 else { return nil }
            let fresh = FileWatcher.registration(file: old.file, onEvent: old.onEvent)
            guard fresh.names != old.names || fresh.isSymlink != old.isSymlink else { return nil }
            state.registrations[token] = fresh
            return FileWatcher.updateWatches(&state)
        }
        if let changes { due.formUnion(watcher.deliver(changes)) }
    }
}
