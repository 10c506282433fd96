import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The offline-first copy of a cloud store on disk: values, the revisions they came at, unsent writes and
/// the account, as readable JSON written with the suite codec (mode 0600).
///
/// Kept in two slot files next to ``fileURL`` (`<name>.slot0`, `<name>.slot1`, see ``CloudLocalCopySlot``),
/// overwritten in place alternately: a process killed during a save leaves the other slot, one save older,
/// intact. A copy in the earlier single-file form (``fileURL`` itself, replaced atomically by each save) is
/// still read when there are no slots, and removed after the first save in slots.
///
/// JSON: `{"format": 1, "account": {...}, "revision": N, "values": {...}, "revisions": {key: N},
/// "pending": {key: {"base": N, "value": v}}}`, a removal pending as `{"base": N, "removed": true}`.
final class CloudLocalCopy: Sendable {
    private struct Writer {
        var stopped = false
        /// The newest complete slot's sequence number; `nil` until read from the slots.
        var sequence: UInt64?
        /// Whether a copy in the single-file form may still have to be removed.
        var singleFileChecked = false
        /// The slot files kept open between saves, by index (`nil`: not open).
        var openSlots: [OpenSlot?] = [nil, nil]
    }

    /// A slot file kept open for reading its header and writing saves. Opening and closing both slots on
    /// every save was most of the save's cost to a write's propagation (`Docs/benchmarks.md`, "Slot files
    /// kept open"). A save first checks (`lstat`) that each path still names the file kept open, and drops
    /// it if not (removed, moved aside, replaced), so no save lands in a file that is no longer the slot.
    private final class OpenSlot: Sendable {
        let file: FileDescriptor
        /// The file it was opened on (`fstat` of the descriptor, so a replacement racing the open is seen).
        let node: FileStatus.Node

        init(opening path: String, _ options: FileDescriptor.Options, mode: UInt32 = 0) throws(SystemCallError) {
            let file = try FileDescriptor(opening: path, options, mode: mode)
            node = try file.status().node
            self.file = file
        }
    }

    let fileURL: URL
    /// The slot files' paths and their directory, worked out from ``fileURL`` once: URL's path operations
    /// were a quarter of a save's CPU.
    private let slotPaths: [String]
    private let directory: URL
    private let writer = Locked(Writer())
    /// How many times the copy was written (for tests of the saver's coalescing).
    let saveCount = Locked(0)

    init(fileURL: URL) {
        self.fileURL = fileURL
        slotPaths = [fileURL.path + ".slot0", fileURL.path + ".slot1"]
        directory = fileURL.deletingLastPathComponent()
    }

    /// The path of slot `index` (0 or 1).
    func slotPath(_ index: Int) -> String { slotPaths[index] }

    /// What reading one file of the copy found.
    private enum FileRead {
        case absent
        case contents(Data)
        /// It exists but could not be read: a directory in its place, no permission, no descriptor left.
        case unreadable(SystemCallError)

        var contents: Data? { if case .contents(let data) = self { data } else { nil } }
        var failure: SystemCallError? { if case .unreadable(let error) = self { error } else { nil } }
        var exists: Bool { if case .absent = self { false } else { true } }
    }

    /// Reads the file at `path` with the `errno` of any failure kept, so an error can say why.
    private static func read(_ path: String) -> FileRead {
        do throws(SystemCallError) {
            let file = try FileDescriptor(opening: path, [.readOnly, .noFollow])
            return .contents(try file.readAll(expectedSize: Int(try file.status().size)))
        } catch {
            return error.errno.isMissingPath ? .absent : .unreadable(error)
        }
    }

    /// Both slots as they are on disk.
    private func slotReads() -> [FileRead] { [0, 1].map { Self.read(slotPath($0)) } }

    /// The complete saves among `slots`, newest first.
    private static func completeSaves(in slots: [Data?]) -> [(sequence: UInt64, content: Data)] {
        slots.compactMap { $0.flatMap(CloudLocalCopySlot.read) }.sorted { $0.sequence > $1.sequence }
    }

    /// The newest complete slot's sequence number and JSON (`nil` when neither slot holds a complete save).
    func newestSlot() -> (sequence: UInt64, content: Data)? {
        Self.completeSaves(in: slotReads().map(\.contents)).first
    }

    /// Reads the copy; `nil` when there is none yet. What cannot be used is moved aside and reported, so
    /// it is neither lost nor overwritten by later saves: a slot that cannot be read to `<slot>.unread` (a
    /// complete other slot is still loaded, and `onProblem` told), a copy that does not parse to
    /// `<name>.broken`. A copy left with nothing to load is the thrown error.
    func load(onProblem: (DefaultsError) -> Void = { _ in }) throws(DefaultsError) -> CloudState? {
        var reads = slotReads()
        var unread: (failure: SystemCallError, moved: [String])?
        if let failure = reads.lazy.compactMap(\.failure).first {
            let paths = [0, 1].filter { reads[$0].failure != nil }.map(slotPath)
            unread = (failure, Self.moveAside(paths, suffix: ".unread"))
            reads = reads.map { $0.failure == nil ? $0 : .absent }
        }
        var slotError: DefaultsError?
        for slot in Self.completeSaves(in: reads.map(\.contents)) {
            do {
                let state = try Self.decode(JSONReader.parseSuite(slot.content, fileURL: fileURL).stringKeyed)
                writer.withLock { $0.sequence = slot.sequence }
                if let unread { onProblem(unreadableError(unread.failure, moved: unread.moved, then: "the store starts from the other slot, which may be one save older")) }
                return state
            } catch {
                slotError = slotError ?? error
            }
        }
        let remaining = [0, 1].filter { reads[$0].exists }.map(slotPath)
        if let unread {
            let moved = unread.moved + Self.moveAside(remaining, suffix: ".unread")
            throw unreadableError(unread.failure, moved: moved, then: "the store starts without it")
        }
        if !remaining.isEmpty, !FileManager.default.fileExists(atPath: fileURL.path) {
            let moved = Self.moveAside(remaining, suffix: ".broken")
            let reason = slotError?.message ?? "neither slot holds a complete save"
            throw DefaultsError(.malformedFile, message: "the cloud store's local copy is damaged (\(reason)); \(Self.fate(moved)) and the store starts from the server", fileURL: fileURL)
        }
        return try loadSingleFile()
    }

    /// Reads the earlier single-file form.
    private func loadSingleFile() throws(DefaultsError) -> CloudState? {
        let data: Data
        switch Self.read(fileURL.path) {
        case .absent: return nil
        case .unreadable(let failure):
            throw unreadableError(failure, moved: Self.moveAside([fileURL.path], suffix: ".unread"), then: "the store starts without it")
        case .contents(let contents): data = contents
        }
        do {
            return try Self.decode(JSONReader.parseSuite(data, fileURL: fileURL).stringKeyed)
        } catch {
            var damaged = error
            damaged.message = "the cloud store's local copy is damaged (\(error.message)); \(Self.fate(Self.moveAside([fileURL.path], suffix: ".broken"))) and the store starts from the server"
            throw damaged
        }
    }

    /// Moves each of `paths` aside to itself plus `suffix` (never over an earlier one: see
    /// ``FileSystem/moveAside(_:to:)``); returns where those that moved went.
    private static func moveAside(_ paths: [String], suffix: String) -> [String] {
        paths.compactMap { try? FileSystem.moveAside($0, to: $0 + suffix) }
    }

    /// Where ``moveAside(_:suffix:)`` put a copy, as an error message says it.
    private static func fate(_ moved: [String]) -> String {
        moved.isEmpty ? "it could not be moved aside" : "it was moved to \(moved.joined(separator: " and "))"
    }

    /// The error for a copy (or slot) that exists but cannot be read: a directory in its place, no
    /// permission, no descriptor left. Moved aside, it is not overwritten by the saves that follow.
    private func unreadableError(_ failure: SystemCallError, moved: [String], then outcome: String) -> DefaultsError {
        DefaultsError(
            .fileSystem, message: "cannot read the cloud store's local copy (\(failure.call) \(failure.path)); \(Self.fate(moved)), and \(outcome)",
            fileURL: fileURL, errorNumber: failure.errno.rawValue)
    }

    /// The sequence number of the next save: one past this copy's last save, unless a slot's header shows a
    /// newer save by another process sharing the copy; then one past the newest complete save on disk, so
    /// the later save wins at load and never overwrites the only complete slot.
    /// `own`: this copy's last save; `found`: what each slot path names now (`nil`: nothing).
    private func nextSequence(after own: UInt64?, _ writer: inout Writer, found: [FileStatus?]) -> UInt64 {
        if let own, !(0...1).contains(where: { (slotHeaderSequence($0, &writer, exists: found[$0] != nil) ?? 0) > own }) {
            return own + 1
        }
        return (newestSlot()?.sequence ?? own ?? 0) + 1
    }

    /// The sequence number in slot `index`'s header line, without reading (or checking) the rest; the
    /// slot is opened (and kept open) if it exists and is not open yet.
    private func slotHeaderSequence(_ index: Int, _ writer: inout Writer, exists: Bool) -> UInt64? {
        guard exists else { return nil }
        if writer.openSlots[index] == nil { writer.openSlots[index] = try? OpenSlot(opening: slotPath(index), [.readWrite, .noFollow]) }
        guard let slot = writer.openSlots[index] else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: CloudLocalCopySlot.headerPrefix.utf8.count + 20, alignment: 1) { header in
            let count = (try? slot.file.readSome(into: header, at: 0)) ?? 0
            return CloudLocalCopySlot.sequence(inHeader: UnsafeRawBufferPointer(rebasing: header[..<count]))
        }
    }

    /// Ends writing: every later ``save(_:)`` does nothing, and the slot files are closed. Waits for a save
    /// in progress, so when it returns the file and its directory are left alone (a sync thread that
    /// outlives its released store would otherwise write, and re-create the directory, after its owner
    /// removed it).
    func stopWriting() {
        writer.withLock { writer in
            writer.stopped = true
            writer.openSlots = [nil, nil]
        }
    }

    /// How many slot files are open now (for tests).
    var openSlotCount: Int { writer.withLock { $0.openSlots.compactMap { $0 }.count } }

    /// Writes `state` into the older slot unless writing was stopped. Called by the store's
    /// ``CloudLocalCopySaver`` only, so saves never overlap and the newest state is written last.
    func save(_ state: CloudState) throws(DefaultsError) {
        try writer.withLock { (writer: inout Writer) throws(DefaultsError) in
            guard !writer.stopped else { return }
            let found = [0, 1].map { try? FileStatus(linkAt: slotPath($0)) }
            for index in 0...1 where writer.openSlots[index]?.node != found[index]?.node { writer.openSlots[index] = nil }
            let sequence = nextSequence(after: writer.sequence, &writer, found: found)
            let index = Int(sequence % 2)
            let path = slotPath(index)
            let content = JSONWriter.encodeSuite(Self.encode(state))
            let slot: OpenSlot
            if let open = writer.openSlots[index] {
                slot = open
            } else {
                slot = try openSlot(path)
                writer.openSlots[index] = slot
            }
            do throws(SystemCallError) {
                // The size before this save (another process's save may have made it longer than ours).
                var size = found[index]?.node == slot.node ? Int(found[index]?.size ?? 0) : 0
                let needed = content.count + 256
                if size > 2 * needed + 4096 {
                    // Much smaller than an earlier save: shrink rather than overwrite all of it with spaces.
                    try slot.file.truncate(to: Int64(needed))
                    size = needed
                }
                try slot.file.writeAll(CloudLocalCopySlot.bytes(sequence: sequence, content: content, paddingTo: size), at: 0)
            } catch {
                throw DefaultsError(error, "cannot write the cloud store's local copy", fileURL: URL(fileURLWithPath: path))
            }
            writer.sequence = sequence
            if !writer.singleFileChecked {
                writer.singleFileChecked = true
                try? FileSystem.removeFile(fileURL.path)
            }
            saveCount.withLock { $0 += 1 }
        }
    }

    /// Opens (or creates) a slot to keep open; creates the state directory (mode 0700) first when it is
    /// missing (not made yet, or removed meanwhile), instead of checking for it before every save.
    private func openSlot(_ path: String) throws(DefaultsError) -> OpenSlot {
        func open() throws(SystemCallError) -> OpenSlot {
            try OpenSlot(opening: path, [.readWrite, .create, .noFollow], mode: 0o600)
        }
        func failure(_ error: SystemCallError) -> DefaultsError {
            DefaultsError(error, "cannot write the cloud store's local copy", fileURL: URL(fileURLWithPath: path))
        }
        do throws(SystemCallError) {
            return try open()
        } catch {
            guard error.errno.isMissingPath else { throw failure(error) }
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DefaultsError(.fileSystem, message: "cannot create the cloud state directory: \(error.localizedDescription)", fileURL: directory)
        }
        do throws(SystemCallError) {
            return try open()
        } catch {
            throw failure(error)
        }
    }

    static func encode(_ state: CloudState) -> [String: DefaultsValue] {
        var pending: [String: DefaultsValue] = [:]
        for (key, write) in state.pending {
            var entry: [String: DefaultsValue] = ["base": .integer(Int(write.baseRevision))]
            if let value = write.value { entry["value"] = value } else { entry["removed"] = .bool(true) }
            pending[key] = .dictionary(entry)
        }
        var result: [String: DefaultsValue] = [
            "format": .integer(1),
            "revision": .integer(Int(state.lastRevision)),
            "values": .dictionary(state.values),
            "revisions": .dictionary(state.serverRevisions.mapValues { .integer(Int($0)) }),
            "pending": .dictionary(pending),
        ]
        if let account = state.account {
            result["account"] = .dictionary([
                "cluster": .string(account.clusterID), "namespace": .string(account.namespace), "user": .string(account.user),
            ])
        }
        return result
    }

    static func decode(_ file: [String: DefaultsValue]) throws(DefaultsError) -> CloudState {
        func bad(_ what: String) -> DefaultsError { DefaultsError(.malformedFile, message: "expected \(what)") }
        guard case .integer(1)? = file["format"] else { throw bad("\"format\": 1") }
        guard case .integer(let revision)? = file["revision"] else { throw bad("\"revision\" as an integer") }
        guard case .dictionary(let values)? = file["values"] else { throw bad("\"values\" as an object") }
        guard case .dictionary(let revisions)? = file["revisions"] else { throw bad("\"revisions\" as an object") }
        guard case .dictionary(let pending)? = file["pending"] else { throw bad("\"pending\" as an object") }
        var state = CloudState()
        for (key, value) in values { state.setValue(value, forKey: key) }
        state.lastRevision = Int64(revision)
        for (key, value) in revisions {
            guard case .integer(let number) = value else { throw bad("an integer revision for \"\(key)\"") }
            state.serverRevisions[key] = Int64(number)
            state.knownRevisions[key] = Int64(number)
        }
        for (key, entry) in pending.sorted(by: { $0.key < $1.key }) {
            guard case .dictionary(let fields) = entry, case .integer(let base)? = fields["base"] else {
                throw bad("a pending write with \"base\" for \"\(key)\"")
            }
            state.pending[key] = PendingWrite(value: fields["value"], baseRevision: Int64(base), generation: state.nextGeneration)
            state.nextGeneration += 1
        }
        if case .dictionary(let account)? = file["account"] {
            guard case .string(let cluster)? = account["cluster"], case .string(let namespace)? = account["namespace"],
                case .string(let user)? = account["user"]
            else { throw bad("\"account\" with cluster, namespace and user strings") }
            state.account = CloudAccount(clusterID: cluster, namespace: namespace, user: user)
        }
        return state
    }
}
