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
/// Between whole saves, local writes are appended as records to two journal files (`<name>.journal0`,
/// `<name>.journal1`, see ``CloudLocalCopyJournal``): a record names the newest save it follows and goes
/// to the journal of that save's parity. Loading takes the newest complete save, then the records that
/// follow it or a later save. A save with sequence N first empties journal N % 2 (records after save N - 2,
/// which no load replays once save N - 1 is complete), while its header still says sequence 0, and only then
/// writes its number: no process can append a record after save N before save N's journal is emptied.
///
/// JSON (`CloudLocalCopy+Format.swift`): `{"format": 1, "account": {...}, "revision": N, "values": {...},
/// "revisions": {key: N}, "pending": {key: {"base": N, "value": v}}}`, a removal pending as
/// `{"base": N, "removed": true}`.
final class CloudLocalCopy: Sendable {
    private struct Writer {
        var stopped = false
        /// A file of the copy could not be read for a reason that may pass (see ``awaitsLoad``).
        var awaitingLoad = false
        /// The newest complete slot's sequence number; `nil` until read from the slots.
        var sequence: UInt64?
        /// Whether a copy in the single-file form may still have to be removed.
        var singleFileChecked = false
        /// The slot files kept open between saves, by index (`nil`: not open).
        var openSlots: [OpenFile?] = [nil, nil]
        /// The journal files kept open for appending, by index.
        var openJournals: [OpenFile?] = [nil, nil]
        /// What the slots were (`lstat` or `fstat`) when the newest save on disk was last known, and its
        /// sequence number: an append reads the slots' headers again only when the slot the next save goes
        /// to changed (see ``newestSequence(_:)``).
        var knownSlots: (marks: [SlotMark?], newest: UInt64)?
        /// Bytes this copy appended to the journals since its last whole save, and that save's size.
        var journalBytes = 0
        var savedBytes = 0
    }

    /// The largest whole save written at once for a local write instead of a journal record.
    static let smallWholeSaveBytes = 8 * 1024

    /// Whether the last whole save (or the one to come, before any) is small enough that a local write
    /// writes a whole save rather than a record. For a few keys the whole save costs what the record does,
    /// and with it a write propagated 4% faster (`Docs/benchmarks.md`, "Local writes as journal records");
    /// past this size the record is far cheaper (8× at 1,000 keys) and its cost does not grow.
    var wholeSavesAreSmall: Bool { writer.withLock { $0.savedBytes <= Self.smallWholeSaveBytes } }

    /// How many bytes of records make a whole save due before the bookkeeping delay (at least; or twice
    /// the last whole save's size), so a process writing in a tight loop does not grow its journal without bound.
    static let journalBytesBeforeSave = 64 * 1024

    /// What `lstat` or `fstat` says of a slot that changes when any process writes it.
    private struct SlotMark: Equatable {
        var node: FileStatus.Node
        var size: Int64
        var modified: FileStatus.Time
        var changed: FileStatus.Time

        init(_ status: FileStatus) {
            (node, size, modified, changed) = (status.node, status.size, status.modified, status.changed)
        }
    }

    /// A slot or journal file kept open between saves. Opening and closing both slots on every save was
    /// most of the save's cost to a write's propagation (`Docs/benchmarks.md`, "Slot files kept open"). A
    /// whole save first checks (`lstat`) that each path still names the file kept open, and drops it if not
    /// (removed, moved aside, replaced), so no save lands in a file that is no longer the copy's; an append
    /// checks its journal's link count (see ``append(_:)``).
    private final class OpenFile: Sendable {
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
    private let journalPaths: [String]
    private let directory: URL
    private let writer = Locked(Writer())
    /// How many whole saves were written.
    let saveCount = Locked(0)
    /// How many records were appended to the journals.
    let recordCount = Locked(0)

    init(fileURL: URL) {
        self.fileURL = fileURL
        slotPaths = [fileURL.path + ".slot0", fileURL.path + ".slot1"]
        journalPaths = [fileURL.path + ".journal0", fileURL.path + ".journal1"]
        directory = fileURL.deletingLastPathComponent()
    }

    /// The path of slot `index` (0 or 1).
    func slotPath(_ index: Int) -> String { slotPaths[index] }

    /// The path of journal `index` (0 or 1).
    func journalPath(_ index: Int) -> String { journalPaths[index] }

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

    /// Reads the copy: the newest complete save, then the journal's records that follow it; `nil` when
    /// there is none yet. What cannot be used is moved aside and reported, so it is neither lost nor
    /// overwritten by later saves: a slot or journal that cannot be read to `<file>.unread` (a complete
    /// other slot is still loaded, and `onProblem` told), a copy that does not parse to `<name>.broken`.
    /// Journal records that are damaged are reported and skipped. A copy left with nothing to load is the
    /// thrown error.
    ///
    /// A file that cannot be read for a reason that may pass (no descriptor left, no memory) moves nothing:
    /// the copy is left as it is, the error thrown says so, and the copy ``awaitsLoad`` until a later call
    /// reads it.
    func load(onProblem: (DefaultsError) -> Void = { _ in }) throws(DefaultsError) -> CloudState? {
        let slots = slotReads()
        let journalReads = journalPaths.map { (path: $0, read: Self.read($0)) }
        try checkReadable(slots + journalReads.map(\.read))
        var state: CloudState?
        var failure: DefaultsError?
        do { state = try loadSaved(slots, onProblem: onProblem) } catch { failure = error }
        var journals: [(path: String, data: Data)] = []
        for (path, read) in journalReads {
            switch read {
            case .absent: continue
            case .contents(let data): journals.append((path, data))
            case .unreadable(let error):
                onProblem(
                    unreadableError(
                        error, moved: Self.moveAside([path], suffix: ".unread"),
                        then: "the writes recorded in it are not loaded"))
            }
        }
        let loaded = writer.withLock { $0.sequence } ?? 0
        let damaged = CloudLocalCopyJournal.replay(journals.map(\.data), after: loaded, onto: &state, fileURL: fileURL)
        for (journal, count) in zip(journals, damaged) where count > 0 {
            onProblem(
                DefaultsError(
                    .malformedFile,
                    message:
                        "the cloud store's local copy's journal \(journal.path) has \(count) damaged record\(count == 1 ? "" : "s"), skipped",
                    fileURL: fileURL))
        }
        if let failure {
            guard state != nil else { throw failure }
            onProblem(failure)  // the journal's writes are loaded all the same
        }
        return state
    }

    /// What a load would find now, without moving anything aside or reporting (a copy another running
    /// process writes, see ``CloudLocalCopyShare``; and tests): the newest
    /// complete slot that decodes, or else the single-file form, with the journal's records after it.
    func currentState() -> CloudState? {
        var state: CloudState?
        var loaded: UInt64 = 0
        for slot in Self.completeSaves(in: slotReads().map(\.contents)) {
            guard let decoded = try? Self.decode(JSONReader.parseSuite(slot.content, fileURL: fileURL).stringKeyed)
            else { continue }
            (state, loaded) = (decoded, slot.sequence)
            break
        }
        if state == nil, let data = Self.read(fileURL.path).contents {
            state = try? Self.decode(JSONReader.parseSuite(data, fileURL: fileURL).stringKeyed)
        }
        CloudLocalCopyJournal.replay(
            journalPaths.compactMap { Self.read($0).contents }, after: loaded, onto: &state, fileURL: fileURL)
        return state
    }

    /// Whether the copy could not be read for a reason that may pass (see ``load(onProblem:)``): until it
    /// is read, ``save(_:)`` and ``append(_:)`` refuse, so nothing in it is overwritten unread.
    var awaitsLoad: Bool { writer.withLock { $0.awaitingLoad } }

    /// Marks the copy as awaiting its load, and throws, when one of `reads` failed for a reason that may
    /// pass; else clears the mark.
    private func checkReadable(_ reads: [FileRead]) throws(DefaultsError) {
        let transient = reads.lazy.compactMap(\.failure).first { $0.errno.isTransient }
        writer.withLock { $0.awaitingLoad = transient != nil }
        guard let transient else { return }
        throw DefaultsError(
            .fileSystem,
            message:
                "cannot read the cloud store's local copy now (\(transient.call) \(transient.path)); it is left as it is and nothing is written to it until it is read: the store starts without its values and unsent writes, and takes them in once it can read it (tried again every second)",
            fileURL: fileURL, errorNumber: transient.errno.rawValue)
    }

    /// The error of ``save(_:)`` or ``append(_:)`` while the copy awaits its load.
    private var notReadYet: DefaultsError {
        DefaultsError(
            .fileSystem, message: "the cloud store's local copy is not written before it has been read",
            fileURL: fileURL)
    }

    /// Reads the newest save in `reads` (the slots) or the single-file form, as ``load(onProblem:)`` describes.
    private func loadSaved(_ reads: [FileRead], onProblem: (DefaultsError) -> Void) throws(DefaultsError) -> CloudState?
    {
        var reads = reads
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
                if let unread {
                    onProblem(
                        unreadableError(
                            unread.failure, moved: unread.moved,
                            then: "the store starts from the other slot, which may be one save older"))
                }
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
        // A save cut short (its process killed in the middle of the first save: the journal holds what it
        // would have held) is passed over without a word, as beside a complete slot; the next save
        // overwrites it.
        let damaged = [0, 1].filter { index in
            reads[index].contents.map {
                !CloudLocalCopySlot.isCutShortFrame(prefix: CloudLocalCopySlot.headerPrefix, $0)
            } ?? false
        }.map(slotPath)
        if !damaged.isEmpty, !FileManager.default.fileExists(atPath: fileURL.path) {
            let moved = Self.moveAside(damaged, suffix: ".broken")
            let reason = slotError?.message ?? "neither slot holds a complete save"
            throw DefaultsError(
                .malformedFile,
                message:
                    "the cloud store's local copy is damaged (\(reason)); \(Self.fate(moved)) and the store starts from the server",
                fileURL: fileURL)
        }
        return try loadSingleFile()
    }

    /// Reads the earlier single-file form.
    private func loadSingleFile() throws(DefaultsError) -> CloudState? {
        let data: Data
        let read = Self.read(fileURL.path)
        try checkReadable([read])
        switch read {
        case .absent: return nil
        case .unreadable(let failure):
            throw unreadableError(
                failure, moved: Self.moveAside([fileURL.path], suffix: ".unread"), then: "the store starts without it")
        case .contents(let contents): data = contents
        }
        do {
            return try Self.decode(JSONReader.parseSuite(data, fileURL: fileURL).stringKeyed)
        } catch {
            var damaged = error
            damaged.message =
                "the cloud store's local copy is damaged (\(error.message)); \(Self.fate(Self.moveAside([fileURL.path], suffix: ".broken"))) and the store starts from the server"
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
            .fileSystem,
            message:
                "cannot read the cloud store's local copy (\(failure.call) \(failure.path)); \(Self.fate(moved)), and \(outcome)",
            fileURL: fileURL, errorNumber: failure.errno.rawValue)
    }

    /// The sequence number of the next save: one past this copy's last save, unless the header of the slot
    /// that save goes to shows a newer save by another process sharing the copy; then one past the newest
    /// complete save on disk, so the later save wins at load and never overwrites the only complete slot.
    /// Only that slot can show one: every save writes the slot after the newest (one past it), so the first
    /// save after this copy's own went there.
    /// `own`: this copy's last save; `found`: what each slot path names now (`nil`: nothing).
    private func nextSequence(after own: UInt64?, _ writer: inout Writer, found: [FileStatus?]) -> UInt64 {
        if let own {
            let next = Int((own + 1) % 2)
            if (slotHeaderSequence(next, &writer, exists: found[next] != nil) ?? 0) <= own { return own + 1 }
        }
        return (newestSlot()?.sequence ?? own ?? 0) + 1
    }

    /// The newest save's sequence number as the slots' headers show it (0: none): the save a record
    /// follows. The headers are read again only when the slot the next save goes to changed since the newest
    /// was last known: every later save, by any process sharing the copy, writes that slot first (one past
    /// the newest complete save).
    private func newestSequence(_ writer: inout Writer) -> UInt64 {
        if let known = writer.knownSlots {
            let next = Int((known.newest + 1) % 2)
            if slotStatus(next, &writer).map(SlotMark.init) == known.marks[next] { return known.newest }
        }
        let found = (0...1).map { slotStatus($0, &writer) }
        let headers = (0...1).map { slotHeaderSequence($0, &writer, exists: found[$0] != nil) ?? 0 }
        let newest = max(writer.sequence ?? 0, headers.max() ?? 0)
        writer.knownSlots = (found.map { $0.map(SlotMark.init) }, newest)
        return newest
    }

    /// The sequence number in slot `index`'s header line, without reading (or checking) the rest; the
    /// slot is opened (and kept open) if it exists and is not open yet.
    private func slotHeaderSequence(_ index: Int, _ writer: inout Writer, exists: Bool) -> UInt64? {
        guard exists else { return nil }
        if writer.openSlots[index] == nil {
            writer.openSlots[index] = try? OpenFile(opening: slotPath(index), [.readWrite, .noFollow])
        }
        guard let slot = writer.openSlots[index] else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: CloudLocalCopySlot.headerPrefix.utf8.count + 20, alignment: 1) {
            header in
            let count = (try? slot.file.readSome(into: header, at: 0)) ?? 0
            return CloudLocalCopySlot.sequence(inHeader: UnsafeRawBufferPointer(rebasing: header[..<count]))
        }
    }

    /// Ends writing: every later ``save(_:)`` and ``append(_:)`` does nothing, and the files are closed.
    /// Waits for a save in progress, so when it returns the files and their directory are left alone (a
    /// sync thread that outlives its released store would otherwise write, and re-create the directory,
    /// after its owner removed it).
    func stopWriting() {
        writer.withLock { writer in
            writer.stopped = true
            writer.openSlots = [nil, nil]
            writer.openJournals = [nil, nil]
        }
    }

    /// Removes every file of the copy (both slots, both journals, the single-file form), passing over one
    /// that is missing or cannot be removed: a copy another store took in (see ``CloudLocalCopyShare``).
    func removeFiles() {
        for path in slotPaths + journalPaths + [fileURL.path] { try? FileSystem.removeFile(path) }
    }

    /// How many slot files are open now.
    var openSlotCount: Int { writer.withLock { $0.openSlots.compactMap { $0 }.count } }

    /// What each slot path names now; a slot kept open whose path names another file by then is dropped.
    private func checkSlots(_ writer: inout Writer) -> [FileStatus?] {
        let found = [0, 1].map { try? FileStatus(linkAt: slotPath($0)) }
        for index in 0...1 where writer.openSlots[index]?.node != found[index]?.node { writer.openSlots[index] = nil }
        return found
    }

    /// Writes `state` into the older slot unless writing was stopped. Called by the store's
    /// ``CloudLocalCopySaver`` only, so saves never overlap and the newest state is written last. Returns
    /// whether it was written (not after ``stopWriting()``).
    @discardableResult
    func save(_ state: CloudState) throws(DefaultsError) -> Bool {
        try writer.withLock { (writer: inout Writer) throws(DefaultsError) -> Bool in
            guard !writer.stopped else { return false }
            guard !writer.awaitingLoad else { throw notReadYet }
            let found = checkSlots(&writer)
            let sequence = nextSequence(after: writer.sequence, &writer, found: found)
            let index = Int(sequence % 2)
            let path = slotPath(index)
            let content = JSONWriter.encodeSuite(Self.encode(state))
            let slot = try keptOpen(&writer.openSlots[index], path, [.readWrite])
            do throws(SystemCallError) {
                // The size before this save (another process's save may have made it longer than ours).
                var size = found[index]?.node == slot.node ? Int(found[index]?.size ?? 0) : 0
                let needed = content.count + 256
                if size > 2 * needed + 4096 {
                    // Much smaller than an earlier save: shrink rather than overwrite all of it with spaces.
                    try slot.file.truncate(to: Int64(needed))
                    size = needed
                }
                if checkJournals(holdingRecords: index, &writer) {
                    // Numbered 0 until the journal it starts is empty (see the type's description).
                    try slot.file.writeAll(
                        CloudLocalCopySlot.bytes(sequence: 0, content: content, paddingTo: size), at: 0)
                    emptyJournal(index, &writer)
                    try slot.file.writeAll(
                        CloudLocalCopySlot.sequenceDigits(sequence), at: CloudLocalCopySlot.sequenceOffset)
                } else {
                    // Its journal is empty already: numbered at once, in one write.
                    try slot.file.writeAll(
                        CloudLocalCopySlot.bytes(sequence: sequence, content: content, paddingTo: size), at: 0)
                }
                // What the slots are now is read by the next append that needs it (``newestSequence(_:)``):
                // a local write's save is followed by another save far more often than by an append.
                writer.knownSlots = nil
                (writer.journalBytes, writer.savedBytes) = (0, content.count)
            } catch {
                throw DefaultsError(
                    error, "cannot write the cloud store's local copy", fileURL: URL(fileURLWithPath: path))
            }
            writer.sequence = sequence
            if !writer.singleFileChecked {
                writer.singleFileChecked = true
                try? FileSystem.removeFile(fileURL.path)
            }
            saveCount.withLock { $0 += 1 }
            return true
        }
    }

    /// Drops a journal kept open whose path names another file by then (moved away, replaced); returns
    /// whether journal `index` holds anything, which the save being written must empty (``emptyJournal(_:_:)``).
    private func checkJournals(holdingRecords index: Int, _ writer: inout Writer) -> Bool {
        var holds = false
        for journal in 0...1 {
            let status = try? FileStatus(linkAt: journalPath(journal))
            if writer.openJournals[journal]?.node != status?.node { writer.openJournals[journal] = nil }
            if journal == index, let status, status.kind == .regular, status.size > 0 { holds = true }
        }
        return holds
    }

    /// Empties journal `index`: its records follow a save two saves older than the one being written, so no
    /// load replays them once that save is complete. Failing to empty it is harmless for the same reason
    /// (the file only stays longer).
    private func emptyJournal(_ index: Int, _ writer: inout Writer) {
        if writer.openJournals[index] == nil {
            writer.openJournals[index] = try? OpenFile(opening: journalPath(index), [.writeOnly, .append, .noFollow])
        }
        try? writer.openJournals[index]?.file.truncate(to: 0)
    }

    /// What slot `index` is now, for naming the save a record follows: `fstat` of the slot kept open
    /// (another process's save overwrites the same file), `lstat` of its path otherwise. Cheaper than `lstat`
    /// of the path; a slot replaced under its path is found by the next whole save's check, within the
    /// bookkeeping delay.
    private func slotStatus(_ index: Int, _ writer: inout Writer) -> FileStatus? {
        if let open = writer.openSlots[index] { return try? open.file.status() }
        return try? FileStatus(linkAt: slotPath(index))
    }

    /// Appends a record of `content` (``CloudLocalCopyJournal/content(of:in:)``) to the journal of the
    /// newest save on disk, unless writing was stopped. Called by the saver only, like ``save(_:)``.
    /// Returns whether the records appended since the last whole save make one due now.
    func append(_ content: Data) throws(DefaultsError) -> Bool {
        try writer.withLock { (writer: inout Writer) throws(DefaultsError) -> Bool in
            guard !writer.stopped else { return false }
            guard !writer.awaitingLoad else { throw notReadYet }
            let after = newestSequence(&writer)
            let index = Int(after % 2)
            let path = journalPath(index)
            // A journal kept open that was removed is opened again at its path (one moved away is found
            // by the next whole save's check).
            if let open = writer.openJournals[index], ((try? open.file.status())?.linkCount ?? 0) == 0 {
                writer.openJournals[index] = nil
            }
            let journal = try keptOpen(&writer.openJournals[index], path, [.writeOnly, .append])
            let record = CloudLocalCopyJournal.bytes(after: after, content: content)
            do throws(SystemCallError) {
                try journal.file.writeAll(record)
            } catch {
                throw DefaultsError(
                    error, "cannot write the cloud store's local copy", fileURL: URL(fileURLWithPath: path))
            }
            recordCount.withLock { $0 += 1 }
            writer.journalBytes += record.count
            return writer.journalBytes > max(Self.journalBytesBeforeSave, 2 * writer.savedBytes)
        }
    }

    /// The file kept open in `kept`, or else `path` opened (created, mode 0600) with `options` and kept.
    private func keptOpen(_ kept: inout OpenFile?, _ path: String, _ options: FileDescriptor.Options)
        throws(DefaultsError) -> OpenFile
    {
        if let kept { return kept }
        let opened = try openCreating(path, options)
        kept = opened
        return opened
    }

    /// Opens (or creates) a file of the copy to keep open; creates the state directory (mode 0700) first
    /// when it is missing (not made yet, or removed meanwhile), instead of checking for it every time.
    private func openCreating(_ path: String, _ options: FileDescriptor.Options) throws(DefaultsError) -> OpenFile {
        func open() throws(SystemCallError) -> OpenFile {
            try OpenFile(opening: path, options.union([.create, .noFollow]), mode: 0o600)
        }
        func failure(_ error: SystemCallError) -> DefaultsError {
            DefaultsError(error, "cannot write the cloud store's local copy", fileURL: URL(fileURLWithPath: path))
        }
        do throws(SystemCallError) {
            return try open()
        } catch {
            guard error.errno.isMissingPath else { throw failure(error) }
        }
        try CloudStateDirectory.recreate(directory, localCopy: fileURL)
        do throws(SystemCallError) {
            return try open()
        } catch {
            throw failure(error)
        }
    }
}
