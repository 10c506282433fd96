import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The reader thread of ``FileWatcher``: reads inotify events, decides which suites to check, and checks
/// them. Everything here is touched by that thread only.
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
    private var writing = Set<ObjectIdentifier>()
    /// Per suite: how many in-place modifications were seen (a read is valid only if none arrived
    /// during it), and how many events of any kind (a settled state is applied only if none arrived).
    private var modifications: [ObjectIdentifier: UInt64] = [:]
    private var events: [ObjectIdentifier: UInt64] = [:]
    /// Suites whose file was read absent, empty or unparseable: when to apply that, if no event came.
    private var settling: [ObjectIdentifier: (deadline: ContinuousClock.Instant, events: UInt64)] = [:]
    /// Suites to check.
    private var due = Set<ObjectIdentifier>()
    private var refreshNeeded = false
    /// When to check that watched directories are still there: a while after a name in one was deleted
    /// or moved away (its own deletion may be the next step, reported late or not at all).
    private var verifyAt: ContinuousClock.Instant?
    private let bufferSize = 64 * 1024
    private let buffer: UnsafeMutableRawPointer

    init(watcher: FileWatcher) {
        self.watcher = watcher
        buffer = .allocate(byteCount: bufferSize, alignment: 8)
    }

    deinit { buffer.deallocate() }

    func run() {
        while true {
            let (descriptor, wakeReader, retryAt) = watcher.state.withLock { ($0.descriptor, $0.wakeReader, $0.retryAt) }
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, timeout(retryAt: retryAt))
            if ready < 0 && errno != EINTR {
                recover(call: "poll", errorNumber: errno)
                continue
            }
            if descriptors[1].revents != 0 { drainWakeUps(wakeReader) }
            if let failure = drainEvents(descriptor) {
                recover(call: "read", errorNumber: failure)
                continue
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
        guard let earliest = (settling.values.map(\.deadline) + [retryAt, verifyAt].compactMap { $0 }).min() else { return -1 }
        let remaining = ContinuousClock.now.duration(to: earliest)
        if remaining <= .zero { return 0 }
        let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
        return Int32(min(milliseconds, 1000))
    }

    private func drainWakeUps(_ descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) > 0 {}
    }

    /// Requests from other threads, and a retry that is due.
    private func takeRequests() {
        let (rereadAll, failure, retryDue) = watcher.state.withLock { state in
            defer {
                state.rereadAllRequested = false
                state.failureRequested = nil
            }
            return (state.rereadAllRequested, state.failureRequested, state.retryAt.map { $0 <= .now } ?? false)
        }
        if rereadAll { overflowed() }
        if let failure { recover(call: "poll", errorNumber: EIO, reportingOnlyTo: failure) }
        if retryDue { refreshNeeded = true }
        if let verifyAt, verifyAt <= .now {
            self.verifyAt = nil
            refreshNeeded = true
        }
    }

    /// A failed `poll` or `read` must not end watching silently: every suite hears about it, and a new
    /// inotify instance takes over (everything is re-read, as changes may have been missed).
    private func recover(call: String, errorNumber: Int32, reportingOnlyTo only: ObjectIdentifier? = nil) {
        let error = DefaultsError(.fileSystem, message: "watching for outside changes failed (\(call)); restarted the watch", errorNumber: errorNumber)
        writing.removeAll()
        due.formUnion(watcher.restart(after: error, reportingOnlyTo: only))
    }

    /// Reads and classifies every queued event; returns the `errno` of a failed read.
    private func drainEvents(_ descriptor: Int32) -> Int32? {
        while true {
            let count = read(descriptor, buffer, bufferSize)
            if count > 0 {
                classify(UnsafeRawBufferPointer(start: buffer, count: count))
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EBADF { return errno }
            return nil
        }
    }

    private func overflowed() {
        due.formUnion(watcher.state.withLock { Array($0.registrations.keys) })
        // A lost close would leave a suite marked as being written for good.
        writing.removeAll()
        // Events about our directories themselves may have been lost too.
        refreshNeeded = true
    }

    private func classify(_ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        let headerSize = MemoryLayout<inotify_event>.size
        while offset + headerSize <= buffer.count {
            let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
            let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
            let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
            var name = ""
            if nameLength > 0 {
                let start = buffer.baseAddress!.advanced(by: offset + headerSize).assumingMemoryBound(to: CChar.self)
                name = String(cString: start)
            }
            offset += headerSize + nameLength
            handle(watch: watch, mask: mask, name: name)
        }
    }

    private func handle(watch: Int32, mask: UInt32, name: String) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return overflowed() }
        if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            // The directory is gone or elsewhere: watch its nearest existing ancestor until it is back.
            watcher.forget(watch: watch, remove: mask & UInt32(IN_MOVE_SELF) != 0)
            refreshNeeded = true
            return
        }
        let (directory, exact, others, waitingForDirectories) = watcher.state.withLock { state -> (String, [ObjectIdentifier], [ObjectIdentifier], Bool) in
            guard let directory = state.directoriesByWatch[watch] else { return ("", [], [], false) }
            let watchedName = FileWatcher.WatchedName(directory: directory, name: name)
            var exact: [ObjectIdentifier] = [], others: [ObjectIdentifier] = []
            for (id, registration) in state.registrations {
                if registration.names.contains(watchedName) {
                    exact.append(id)
                } else if registration.isSymlink && registration.names.contains(where: { $0.directory == directory }) {
                    others.append(id)
                }
            }
            return (directory, exact, others, !state.unwatched.isEmpty)
        }
        if waitingForDirectories && mask & UInt32(IN_ISDIR) != 0 && mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
            refreshNeeded = true
        }
        if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 && !directory.isEmpty {
            verifyAt = ContinuousClock.now.advanced(by: FileWatcher.settleDelay)
        }
        for id in exact + others { events[id, default: 0] += 1 }
        if mask & UInt32(IN_MODIFY) != 0 {
            for id in exact {
                modifications[id, default: 0] += 1
                writing.insert(id)
            }
        }
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) != 0 {
            // Closed, or another file (or none) is in place now.
            for id in exact { writing.remove(id) }
        }
        let finishing = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM)
        if mask & finishing != 0 || (mask & UInt32(IN_CREATE) != 0 && FileWatcher.isSymlink(directory + "/" + name)) {
            due.formUnion(exact)
            due.formUnion(others)
        }
        // A regular file being created is read when its writer closes it (IN_CLOSE_WRITE).
    }

    /// Re-reads one suite if its file changed, unless a writer is busy with it, and follows a re-pointed
    /// symlink to its new directory.
    private func check(_ id: ObjectIdentifier, acceptSuspect: Bool) {
        guard !writing.contains(id), let storage = watcher.state.withLock({ $0.registrations[id]?.storage }) else { return }
        let modificationsBefore = modifications[id, default: 0]
        storage.reloadFromDisk { [self] suspect in
            // Take in what happened while the file was read.
            _ = drainEvents(watcher.state.withLock { $0.descriptor })
            if modifications[id, default: 0] != modificationsBefore {
                // Read while a writer was busy: its close (or a check already due) reads again.
                if !writing.contains(id) { due.insert(id) }
                return false
            }
            if suspect && !acceptSuspect {
                settling[id] = (ContinuousClock.now.advanced(by: FileWatcher.settleDelay), events[id, default: 0])
                return false
            }
            return true
        }
        let changes = watcher.state.withLock { state -> FileWatcher.WatchChanges? in
            guard let old = state.registrations[id], old.isSymlink || old.names.count > 1 else { return nil }
            let fresh = FileWatcher.registration(for: storage)
            guard fresh.names != old.names || fresh.isSymlink != old.isSymlink else { return nil }
            state.registrations[id] = fresh
            return FileWatcher.updateWatches(&state)
        }
        if let changes { due.formUnion(watcher.deliver(changes)) }
    }
}
