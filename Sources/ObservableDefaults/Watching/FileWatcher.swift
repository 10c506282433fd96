import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's one inotify instance and its reader thread.
///
/// It watches **directories**, not files: editors and our own writer replace a file by renaming another
/// over it, which a watch on the file itself would lose. An event whose name is a watched suite's file
/// triggers a check of that suite (one `stat`, and a re-read plus diff only if the file really changed).
/// Symlinked suites (the Kubernetes ConfigMap layout `app.json -> ..data/app.json`) are checked on any
/// name in their directory, because the swap renames `..data`, not the file; the directory of the
/// symlink's target is watched as well.
///
/// Only events that finish a save are read: a close after writing (truncate-and-write saves, `cp`, shell
/// `>`), a rename into place, a new symlink, a metadata change. They are handled as soon as the queued
/// burst has been drained. Modifications in progress are never read, however long the writer stalls, so
/// a half-written file is never seen. A delete (or rename away) is applied only if the file is still
/// absent after ``settleDelay``: a delete-then-recreate is one change, not two.
final class FileWatcher: Sendable {
    static let shared = FileWatcher()

    /// How long a deleted suite file may take to reappear before its deletion is applied.
    static let settleDelay: Duration = .milliseconds(500)

    private struct Registration {
        weak var storage: SuiteStorage?
        /// `(directory, file name)` pairs whose events concern this suite.
        var names: Set<WatchedName>
        /// The suite file is a symlink: any event in its directory may have re-pointed it.
        var isSymlink: Bool
    }

    private struct WatchedName: Hashable {
        var directory: String
        var name: String
    }

    private struct State {
        var descriptor: Int32 = -1
        var threadStarted = false
        var registrations: [ObjectIdentifier: Registration] = [:]
        var watchDescriptors: [String: Int32] = [:]
        var directoriesByWatch: [Int32: String] = [:]
        var setupError: DefaultsError?
    }

    private let state = Locked(State())

    private static let eventMask: UInt32 = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    private static let finishingEvents: UInt32 = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB)
    private static let removalEvents: UInt32 = UInt32(IN_DELETE | IN_MOVED_FROM)

    /// Starts delivering file events for `storage`.
    func watch(_ storage: SuiteStorage) {
        let failure = state.withLock { state -> DefaultsError? in
            if state.descriptor < 0 {
                state.descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
                if state.descriptor < 0 {
                    return DefaultsError(.fileSystem, message: "cannot start watching for outside changes (inotify_init1 failed)", fileURL: storage.fileURL, errorNumber: errno)
                }
            }
            let registration = Self.registration(for: storage)
            state.registrations[ObjectIdentifier(storage)] = registration
            let failure = Self.updateWatches(&state)
            if !state.threadStarted {
                state.threadStarted = true
                let descriptor = state.descriptor
                let thread = Thread { [self] in self.run(descriptor: descriptor) }
                thread.name = "ObservableDefaults.FileWatcher"
                thread.start()
            }
            return failure
        }
        if let failure { storage.report(failure) }
    }

    /// Stops delivering file events for `storage`; directories no suite needs any more are unwatched.
    func unwatch(_ storage: SuiteStorage) {
        state.withLock { state in
            state.registrations.removeValue(forKey: ObjectIdentifier(storage))
            _ = Self.updateWatches(&state)
        }
    }

    /// The directories currently watched (for tests and diagnostics).
    var watchedDirectories: Set<String> {
        state.withLock { Set($0.watchDescriptors.keys) }
    }

    private static func registration(for storage: SuiteStorage) -> Registration {
        let linkPath = storage.fileURL.path
        var names: Set<WatchedName> = [WatchedName(directory: directoryPart(of: linkPath), name: namePart(of: linkPath))]
        let isSymlink = Self.isSymlink(linkPath)
        if isSymlink {
            let target = SuiteFileIO.writeTarget(for: storage.fileURL).path
            names.insert(WatchedName(directory: directoryPart(of: target), name: namePart(of: target)))
        }
        return Registration(storage: storage, names: names, isSymlink: isSymlink)
    }

    private static func directoryPart(of path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }

    private static func namePart(of path: String) -> String {
        (path as NSString).lastPathComponent
    }

    /// Adds watches for directories registrations need and removes the rest.
    private static func updateWatches(_ state: inout State) -> DefaultsError? {
        let needed = Set(state.registrations.values.flatMap { $0.names.map(\.directory) })
        for (directory, watch) in state.watchDescriptors where !needed.contains(directory) {
            inotify_rm_watch(state.descriptor, watch)
            state.watchDescriptors.removeValue(forKey: directory)
            state.directoriesByWatch.removeValue(forKey: watch)
        }
        var failure: DefaultsError?
        for directory in needed where state.watchDescriptors[directory] == nil {
            let watch = inotify_add_watch(state.descriptor, directory, eventMask | UInt32(IN_ONLYDIR))
            if watch < 0 {
                failure = DefaultsError(.fileSystem, message: "cannot watch the directory for outside changes", fileURL: URL(fileURLWithPath: directory), errorNumber: errno)
                continue
            }
            state.watchDescriptors[directory] = watch
            state.directoriesByWatch[watch] = directory
        }
        return failure
    }

    // MARK: The reader thread

    private func run(descriptor: Int32) {
        var settling: [ObjectIdentifier: ContinuousClock.Instant] = [:]
        let bufferSize = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let timeout: Int32
            if let earliest = settling.values.min() {
                let remaining = ContinuousClock.now.duration(to: earliest)
                timeout = remaining <= .zero ? 0 : Int32(min(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1, 1000))
            } else {
                timeout = -1
            }
            let ready = poll(&pollDescriptor, 1, timeout)
            if ready < 0 && errno != EINTR { return }
            var now = Set<ObjectIdentifier>()
            if ready > 0 {
                // Drain everything queued, so one save's burst of events becomes one check per suite.
                while true {
                    let count = read(descriptor, buffer, bufferSize)
                    if count <= 0 { break }
                    classify(events: UnsafeRawBufferPointer(start: buffer, count: count), now: &now, settling: &settling)
                }
            }
            let clock = ContinuousClock.now
            for (id, deadline) in settling where deadline <= clock {
                settling.removeValue(forKey: id)
                // Still gone: apply the deletion. Back again: its own close or rename event reads it.
                if !fileExists(id) { now.insert(id) }
            }
            for id in now { check(id) }
        }
    }

    private func classify(
        events: UnsafeRawBufferPointer, now: inout Set<ObjectIdentifier>,
        settling: inout [ObjectIdentifier: ContinuousClock.Instant]
    ) {
        var offset = 0
        let headerSize = MemoryLayout<inotify_event>.size
        while offset + headerSize <= events.count {
            let watch = events.load(fromByteOffset: offset, as: Int32.self)
            let mask = events.load(fromByteOffset: offset + 4, as: UInt32.self)
            let nameLength = Int(events.load(fromByteOffset: offset + 12, as: UInt32.self))
            var name = ""
            if nameLength > 0 {
                let start = events.baseAddress!.advanced(by: offset + headerSize).assumingMemoryBound(to: CChar.self)
                name = String(cString: start)
            }
            offset += headerSize + nameLength
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                now.formUnion(state.withLock { Array($0.registrations.keys) })
                continue
            }
            if mask & UInt32(IN_IGNORED) != 0 {
                state.withLock { state in
                    if let directory = state.directoriesByWatch.removeValue(forKey: watch) {
                        state.watchDescriptors.removeValue(forKey: directory)
                    }
                }
                continue
            }
            let (directory, affected) = state.withLock { state -> (String, [ObjectIdentifier]) in
                guard let directory = state.directoriesByWatch[watch] else { return ("", []) }
                let watchedName = WatchedName(directory: directory, name: name)
                return (directory, state.registrations.compactMap { id, registration in
                    registration.names.contains(watchedName)
                        || (registration.isSymlink && registration.names.contains { $0.directory == directory })
                        ? id : nil
                })
            }
            if affected.isEmpty { continue }
            if mask & Self.finishingEvents != 0 || (mask & UInt32(IN_CREATE) != 0 && Self.isSymlink(directory + "/" + name)) {
                now.formUnion(affected)
            } else if mask & Self.removalEvents != 0 {
                for id in affected where settling[id] == nil {
                    settling[id] = ContinuousClock.now.advanced(by: Self.settleDelay)
                }
            }
            // A regular file being created is read when its writer closes it (IN_CLOSE_WRITE).
        }
    }

    private static func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    private func fileExists(_ id: ObjectIdentifier) -> Bool {
        guard let storage = state.withLock({ $0.registrations[id]?.storage }) else { return false }
        return FileIdentity.of(path: storage.fileURL.path) != nil
    }

    /// Feeds a synthetic `IN_Q_OVERFLOW` event through the same path as real events, on the calling
    /// thread (for tests: a real overflow needs more queued events than the system limit).
    func simulateQueueOverflow() {
        var event = inotify_event()
        event.wd = -1
        event.mask = UInt32(IN_Q_OVERFLOW)
        var now = Set<ObjectIdentifier>()
        var settling: [ObjectIdentifier: ContinuousClock.Instant] = [:]
        withUnsafeBytes(of: &event) { classify(events: $0, now: &now, settling: &settling) }
        for id in now { check(id) }
    }

    /// Re-reads one suite if its file changed, and follows a re-pointed symlink to its new directory.
    private func check(_ id: ObjectIdentifier) {
        guard let storage = state.withLock({ $0.registrations[id]?.storage }) else { return }
        storage.reloadFromDisk()
        let failure = state.withLock { state -> DefaultsError? in
            guard let old = state.registrations[id], old.isSymlink || old.names.count > 1 else { return nil }
            let fresh = Self.registration(for: storage)
            guard fresh.names != old.names || fresh.isSymlink != old.isSymlink else { return nil }
            state.registrations[id] = fresh
            return Self.updateWatches(&state)
        }
        if let failure { storage.report(failure) }
    }
}
