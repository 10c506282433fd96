#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which layer files are known to be absent, for the whole process: opening a suite with the standard
/// layers would otherwise try to open `NAME.json`, then `NAME.plist`, in the managed, each system and the
/// global directory, and find nothing almost every time (most suites have no managed or system file).
///
/// A layer directory (or, when it is missing, its nearest existing ancestor) is listed once, with an
/// inotify watch added first; the watch's events (names created, moved in or out, removed; the directory
/// itself removed or moved) keep the listing true. A suite that opens reads the queued events first (one
/// non-blocking `read`): the kernel queues an event before the call that made the entry returns, so a
/// file created by any process before the suite opens is seen, and a name missing from the listing then
/// really is absent. Only opening uses the listings: a watched suite reads its layer files again when
/// their watch fires, and ``DefaultsSuite/reload()`` opens them, as before.
///
/// Not listed, so its files are opened every time: a directory that is a symlink (it may be pointed
/// elsewhere without an event in it), one that cannot be read or watched (no inotify instance or watch
/// left). A directory whose path leads through a symlink that is pointed elsewhere, or over which a file
/// system is mounted, while the process runs is not noticed until an event in the listed directory.
final class LayerFileAbsence: Sendable {
    /// The process's listings.
    static let shared = LayerFileAbsence()

    private struct State {
        /// The inotify instance, made when the first listing is (`nil`: not yet, or it could not be).
        var inotify: Inotify?
        var triedInotify = false
        /// The names in each listed directory (paths without a trailing `/`).
        var listings: [String: Set<String>] = [:]
        /// The listed directories of each watch (one inode reached by two paths has one watch).
        var directories: [Int32: [String]] = [:]
    }

    private let state = Locked(State())
    /// The events that keep a listing true.
    private static let mask: Inotify.Mask = [
        .created, .movedTo, .movedFrom, .deleted, .deletedSelf, .movedSelf, .onlyDirectory,
        Inotify.Mask(rawValue: UInt32(IN_DONT_FOLLOW))
    ]

    /// Applies the events queued since the last call: call once when a suite opens, before ``isAbsent(_:)``.
    func catchUp() {
        state.withLock { state in
            guard let inotify = state.inotify, !state.listings.isEmpty else { return }
            Self.drain(inotify, &state)
        }
    }

    /// Whether the file `name` in `directory` (a path without a trailing `/`) is known absent: `directory`
    /// is listed without it, or a listed directory on the way to `directory` lacks the next component.
    func isAbsent(_ name: String, in directory: String) -> Bool {
        state.withLock { state in
            guard !state.listings.isEmpty else { return false }
            if let names = state.listings[directory] { return !names.contains(name) }
            // The directory itself may be missing: walk up, by bytes (a path is not text to segment).
            let bytes = Array(directory.utf8)
            var end = bytes.count
            while let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) {
                let parent = slash == 0 ? "/" : String(decoding: bytes[..<slash], as: UTF8.self)
                if let names = state.listings[parent] {
                    return !names.contains(String(decoding: bytes[(slash + 1)..<end], as: UTF8.self))
                }
                if slash == 0 { return false }
                end = slash
            }
            return false
        }
    }

    /// Lists the nearest existing directory on the path of `path`, a file just found missing, so that the
    /// next suites to open know it (and its neighbours) absent without opening them.
    func noteMissing(_ path: String) {
        // Usually its directory is listed already (the name is in the listing: a dangling symlink, or a
        // removal not read yet).
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let parent = String(path[..<slash])
            if state.withLock({ $0.listings[parent] != nil }) { return }
        }
        var directory = path
        repeat {
            guard let slash = directory.lastIndex(of: "/") else { return }
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
            var info = stat()
            if lstat(directory, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else { return }
                break
            }
            guard errno == ENOENT else { return }
        } while directory != "/"
        state.withLock { state in
            guard state.listings[directory] == nil, let inotify = Self.inotify(&state) else { return }
            // Events already queued belong to listings made before; the watch comes before the listing, so
            // an entry made while listing is in the listing, in an event, or both.
            Self.drain(inotify, &state)
            guard let watch = try? inotify.addWatch(directory, mask: Self.mask) else { return }
            guard let names = Self.names(in: directory) else {
                if state.directories[watch] == nil { inotify.removeWatch(watch) }
                return
            }
            state.listings[directory] = names
            state.directories[watch, default: []].append(directory)
        }
    }

    private static func inotify(_ state: inout State) -> Inotify? {
        if !state.triedInotify {
            state.triedInotify = true
            state.inotify = try? Inotify()
        }
        return state.inotify
    }

    /// The names in `directory`, or `nil` when it cannot be read.
    private static func names(in directory: String) -> Set<String>? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names = Set<String>()
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.insert(name) }
        }
        return names
    }

    /// Reads the queued events into the listings. Lost events forget every listing.
    private static func drain(_ inotify: Inotify, _ state: inout State) {
        var forgetAll = false
        do throws(SystemCallError) {
            // On the stack: most drains find nothing, and a heap buffer would cost more than that read.
            try withUnsafeTemporaryAllocation(byteCount: 16 * Inotify.largestEventSize, alignment: 8) {
                buffer throws(SystemCallError) in
                _ = try inotify.drainEvents(into: buffer) { event in
                    if event.mask.contains(.queueOverflowed) {
                        forgetAll = true
                        return
                    }
                    guard let directories = state.directories[event.watch] else { return }
                    if !event.mask.isDisjoint(with: [.deletedSelf, .movedSelf, .watchEnded]) {
                        for directory in directories { state.listings[directory] = nil }
                        state.directories[event.watch] = nil
                        if !event.mask.contains(.watchEnded) { inotify.removeWatch(event.watch) }
                        return
                    }
                    let appeared = !event.mask.isDisjoint(with: [.created, .movedTo])
                    for directory in directories {
                        if appeared {
                            state.listings[directory]?.insert(event.name)
                        } else {
                            state.listings[directory]?.remove(event.name)
                        }
                    }
                }
            }
        } catch {
            forgetAll = true
        }
        if forgetAll {
            for watch in state.directories.keys { inotify.removeWatch(watch) }
            state.listings = [:]
            state.directories = [:]
        }
    }
}
