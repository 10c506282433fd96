#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the process knows about its layer directories, kept true by one inotify queue: which files each
/// holds, and the last read of each layer file while it has not changed. Opening a suite with the standard
/// layers would otherwise try to open `NAME.json`, then `NAME.plist`, in the managed, each system and the
/// global directory and find nothing almost every time (most suites have no managed or system file), and
/// read and parse the global domain's file again for every suite.
///
/// A layer directory (or, when it is missing, its nearest existing ancestor) is listed once, with an
/// inotify watch added first; the watch's events (names created, moved in or out, removed, written,
/// their attributes changed; the directory itself removed or moved) keep the listing true, and give each
/// name a stamp that changes with every event of that name. A suite that opens reads the queued events
/// first (one non-blocking `read`): the kernel queues an event before the call that made it returns, so a
/// file any process created, wrote, replaced or `chmod`ed before the suite opens is seen; a name missing
/// from the listing then really is absent, and a file whose stamp is the one it was read under holds what
/// was read (its values, or why it cannot be used). Only opening uses the listings: a watched suite reads
/// its layer files again when their watch fires, and ``DefaultsSuite/reload()`` opens them, as before.
///
/// Not listed, so its files are opened every time: a directory that is a symlink (it may be pointed
/// elsewhere without an event in it), one that cannot be read or watched (no inotify instance or watch
/// left). Not kept, so read every time: a layer file that is a symlink or has other hard links (written
/// without an event in its directory), and a read that failed in a system call. A directory whose path
/// leads through a symlink that is pointed elsewhere, or over which a file system is mounted, while the
/// process runs is not noticed until an event in the listed directory; nor is a write through a shared
/// memory mapping, which inotify does not report.
///
/// The listings and the kept reads last as long as the process: they belong to no suite, and at most
/// ``keptReadLimit`` reads are kept. The queue is read only when a suite opens; one that overflowed while
/// nobody opened a suite (the kernel keeps `max_queued_events`) forgets every listing and kept read, and
/// the next opens make them again.
final class LayerListings: Sendable {
    /// The process's listings.
    static let shared = LayerListings()

    /// How many layer files' reads are kept at most.
    static let keptReadLimit = 64

    /// What the listings say about the two candidates of a layer file (`NAME.json`, `NAME.plist`): 0 for a
    /// candidate known absent, else its stamp.
    struct Stamps: Equatable, Sendable {
        var json: UInt64
        var plist: UInt64

        subscript(index: Int) -> UInt64 { index == 0 ? json : plist }

        /// Both candidates are absent.
        var isEmpty: Bool { json == 0 && plist == 0 }
    }

    /// What the listings know about a layer file now.
    enum Known {
        /// Read while its candidates had the stamps they have now: the same values, or the same error.
        case read(Result<[ExactKey: LayerEntry], DefaultsError>)
        /// Its candidates' stamps, and the clock when they were taken (to read them under, see
        /// ``remember(_:_:at:_:)``).
        case stamps(Stamps, clock: UInt64)
        /// Its directory is not listed: its files must be opened to know.
        case unknown
    }

    private struct KeptRead {
        var stamps: Stamps
        /// The clock when ``stamps`` were last found true: while it has not moved, nothing changed.
        var checked: UInt64
        var result: Result<[ExactKey: LayerEntry], DefaultsError>
    }

    private struct State {
        /// The inotify instance, made when the first listing is (`nil`: not yet, or it could not be).
        var inotify: Inotify?
        var triedInotify = false
        /// The number of each directory path met (see ``LayerDirectory``).
        var numbers: [String: Int] = [:]
        /// The names in each listed directory (by number), with their stamps.
        var listings: [Int: [String: UInt64]] = [:]
        /// The listed directories of each watch (one inode reached by two paths has one watch).
        var directories: [Int32: [Int]] = [:]
        /// The last stamp given: a listing's names get a new one, and so does a name at each event; a
        /// listing forgotten moves it too.
        var clock: UInt64 = 0
        var reads: [LayerFile.Key: KeptRead] = [:]
    }

    private let state = Locked(State())
    /// The events that keep a listing true.
    private static let mask: Inotify.Mask = [
        .created, .movedTo, .movedFrom, .deleted, .modified, .attributesChanged, .deletedSelf, .movedSelf,
        .onlyDirectory, Inotify.Mask(rawValue: UInt32(IN_DONT_FOLLOW))
    ]

    /// The number of the directory at `path` (without a trailing `/`), given the first time it is asked for.
    func number(of path: String) -> Int {
        state.withLock { state in Self.number(of: path, &state) }
    }

    private static func number(of path: String, _ state: inout State) -> Int {
        if let number = state.numbers[path] { return number }
        let number = state.numbers.count + 1
        state.numbers[path] = number
        return number
    }

    /// Applies the events queued since the last call: call once when a suite opens, before ``lookUp(_:)``
    /// and ``isAbsent(_:in:)``.
    func catchUp() {
        state.withLock { state in
            guard let inotify = state.inotify, !state.listings.isEmpty else { return }
            Self.drain(inotify, &state)
        }
    }

    /// What is known about `file` now: a read made under the stamps its candidates have now, else those
    /// stamps, else nothing (its directory is not listed).
    func lookUp(_ file: LayerFile) -> Known {
        state.withLock { state in
            let kept = state.reads[file.key]
            if let kept, kept.checked == state.clock { return .read(kept.result) }
            guard let json = Self.stamp(file.name(0), in: file.directory, state),
                let plist = Self.stamp(file.name(1), in: file.directory, state)
            else { return .unknown }
            let stamps = Stamps(json: json, plist: plist)
            guard let kept else { return .stamps(stamps, clock: state.clock) }
            if kept.stamps == stamps {
                state.reads[file.key]?.checked = state.clock
                return .read(kept.result)
            }
            state.reads[file.key] = nil
            return .stamps(stamps, clock: state.clock)
        }
    }

    /// Keeps `result`, read from `file` after ``lookUp(_:)`` gave `stamps` at `clock`. An event of its
    /// candidates since then has changed their stamps, so a read that raced with a change is never taken.
    func remember(
        _ file: LayerFile, _ stamps: Stamps, at clock: UInt64, _ result: Result<[ExactKey: LayerEntry], DefaultsError>
    ) {
        state.withLock { state in
            if state.reads.count >= Self.keptReadLimit && state.reads[file.key] == nil { state.reads = [:] }
            state.reads[file.key] = KeptRead(stamps: stamps, checked: clock, result: result)
        }
    }

    /// Whether the file `name` in `directory` is known absent: `directory` is listed without it, or a listed
    /// directory on the way to `directory` lacks the next component.
    func isAbsent(_ name: String, in directory: LayerDirectory) -> Bool {
        state.withLock { Self.stamp(name, in: directory, $0) == 0 }
    }

    /// 0 when `name` in `directory` is known absent, its stamp when `directory` is listed with it, `nil`
    /// when neither is known.
    private static func stamp(_ name: String, in directory: LayerDirectory, _ state: State) -> UInt64? {
        guard !state.listings.isEmpty else { return nil }
        if let names = state.listings[directory.id] { return names[name] ?? 0 }
        // The directory itself may be missing: walk up, by bytes (a path is not text to segment).
        let bytes = Array(directory.path.utf8)
        var end = bytes.count
        while let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) {
            let parent = slash == 0 ? "/" : String(decoding: bytes[..<slash], as: UTF8.self)
            if let number = state.numbers[parent], let names = state.listings[number] {
                return names[String(decoding: bytes[(slash + 1)..<end], as: UTF8.self)] == nil ? 0 : nil
            }
            if slash == 0 { return nil }
            end = slash
        }
        return nil
    }

    /// Lists the nearest existing directory on the path of `path`, a layer file whose directory was not
    /// listed, so that the next suites to open know whether it (and its neighbours) exist without opening
    /// them, and may take their reads.
    func list(around path: String) {
        // Another suite may have listed it since.
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let parent = String(path[..<slash])
            if state.withLock({ state in state.numbers[parent].map { state.listings[$0] != nil } ?? false }) { return }
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
            let number = Self.number(of: directory, &state)
            guard state.listings[number] == nil, let inotify = Self.inotify(&state) else { return }
            // Events already queued belong to listings made before; the watch comes before the listing, so
            // an entry made while listing is in the listing, in an event, or both.
            Self.drain(inotify, &state)
            guard let watch = try? inotify.addWatch(directory, mask: Self.mask) else { return }
            guard let names = Self.names(in: directory) else {
                if state.directories[watch] == nil { inotify.removeWatch(watch) }
                return
            }
            state.clock += 1
            let stamp = state.clock
            state.listings[number] = Dictionary(uniqueKeysWithValues: names.map { ($0, stamp) })
            state.directories[watch, default: []].append(number)
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

    /// Reads the queued events into the listings. Lost events forget every listing and every kept read.
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
                        state.clock += 1
                        for directory in directories { state.listings[directory] = nil }
                        state.directories[event.watch] = nil
                        if !event.mask.contains(.watchEnded) { inotify.removeWatch(event.watch) }
                        return
                    }
                    // An event on the directory itself (its attributes) names nothing in it.
                    guard !event.name.isEmpty else { return }
                    let gone = !event.mask.isDisjoint(with: [.movedFrom, .deleted])
                    state.clock += 1
                    for directory in directories {
                        state.listings[directory]?[event.name] = gone ? nil : state.clock
                    }
                }
            }
        } catch {
            forgetAll = true
        }
        if forgetAll {
            state.clock += 1
            for watch in state.directories.keys { inotify.removeWatch(watch) }
            state.listings = [:]
            state.directories = [:]
            state.reads = [:]
        }
    }
}

/// A layer directory's path (without a trailing `/`, but `/` itself) and the number the process's
/// ``LayerListings`` gave it: layer files and listings are looked up by the number, cheaper to hash than the
/// path. One path has one number for the life of the process.
struct LayerDirectory: Hashable, Sendable {
    let path: String
    let id: Int

    /// The directory at `path`.
    init(_ path: String) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        id = LayerListings.shared.number(of: self.path)
    }

    static func == (lhs: LayerDirectory, rhs: LayerDirectory) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
