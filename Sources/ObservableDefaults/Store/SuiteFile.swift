import Foundation

/// One suite file as this process knows it: the version last read or written (its identity, values and
/// the format's document), re-reading it (``reread(_:gate:)``) and writing pending changes into it in a
/// cross-process transaction (``write(_:into:)``).
///
/// It keeps no memory of the suite's own and calls nothing back: both operations return the new version
/// (a ``FileRead`` or an ``AdoptedVersion``), which the caller merges into memory and then makes the known
/// one (``makeKnown(_:)``), all inside ``withDocument(_:)``, whose lock orders this process's reads and
/// writes of the file and the merges of what they found.
final class SuiteFile: Sendable {
    typealias Entry = SuiteFormat.Entry

    /// The format's document of the known version: changed in place by writes and re-reads.
    struct Document {
        /// The file's contents.
        var values: [ExactKey: DefaultsValue] = [:]
        /// `values` sorted by key (the order the writers use), once a write has needed them.
        var entries: [Entry]?
        /// The bytes `values` came from: last written or read. `entries`' fragments point into them (set
        /// only by a write).
        var bytes: [UInt8]?
        /// Where the top-level members of `bytes` are, once a re-read or a write has needed them: the
        /// next re-read compares the new file's members with these and parses only those that changed, and
        /// the next write edits them (see ``JSONSuiteEditor``, ``PropertyListXMLSuiteEditor``).
        var members: [SuiteIndex.Member]?
        /// The text of numbers in the file that the writer would spell differently (JSON), kept by writes.
        var spellings = JSONNumberSpellings()
    }

    /// Which versions of the file are known, readable without waiting for a write under way.
    struct KnownVersions {
        /// The version `Document` holds; `nil` when there was no file.
        var identity: FileIdentity?
        /// The version that failed to parse, and why, so it is reported once, not on every event.
        var brokenIdentity: FileIdentity?
        var brokenError: DefaultsError?
        /// The version a write of this process is renaming into place and merging into memory (set just
        /// before the rename, cleared by ``makeKnown(_:)`` or when the write fails). That write announces
        /// whatever the version changed, so the watcher's check of it need not wait (see
        /// ``isKnownOrBeingAdopted``). Its change time is the one before the rename, which changes it.
        var adopting: FileIdentity?
    }

    let url: URL
    /// `url.path`, computed once (`URL.path` percent-decodes on every call, and the watcher's check of
    /// every own write needs it).
    let path: String
    let format: SuiteFormat
    /// Held for the whole of a write or re-read and the merge of its version (see ``withDocument(_:)``).
    private let document = Locked(Document())
    let known = Locked(KnownVersions())

    init(url: URL, format: SuiteFormat) {
        self.url = url
        path = url.path
        self.format = format
    }

    /// Runs `body` with the document to itself: this process's reads and writes of the file, and the
    /// merges of the versions they return, happen one at a time, so a slow re-read can never overwrite
    /// memory with a version older than one just written.
    func withDocument<R, E: Error>(_ body: (inout Document) throws(E) -> R) throws(E) -> R {
        try document.withLock(body)
    }

    /// The file's contents as last read or written.
    var knownValues: [ExactKey: DefaultsValue] { document.withLock { $0.values } }

    /// Whether `identity` is the version the document holds, or the broken one already reported.
    func isKnownVersion(_ identity: FileIdentity?) -> Bool {
        known.withLock { identity == $0.identity || (identity != nil && identity == $0.brokenIdentity) }
    }

    /// Whether the file at the path is a version already known (one `stat`). The event of our own
    /// write, or a touch that changed nothing, ends here without waiting for a write under way.
    var isUnchangedOnDisk: Bool { isKnownVersion(FileIdentity.of(path: path)) }

    /// ``isUnchangedOnDisk``, or the file is the version a write of this process is renaming into place
    /// and merging now (one `stat`; the change time aside, which the rename changes). For the watcher:
    /// that write announces what its version changed (other processes' keys it re-read), so the event of
    /// our own rename ends here instead of waiting for the write to release the document, which parked
    /// the watcher thread and woke it a second time per own write. A version anyone else wrote has
    /// another inode, or (written in place) another modification time, and is re-read.
    /// Not for ``DefaultsSuite/reload()``: memory may not hold such a version yet.
    var isKnownOrBeingAdopted: Bool {
        let identity = FileIdentity.of(path: path)
        return known.withLock { known in
            guard let identity else { return known.identity == nil }
            return identity == known.identity || identity == known.brokenIdentity
                || known.adopting.map { identity.isSameVersion(ignoringChangeTime: $0) } == true
        }
    }

    // MARK: Re-reading

    /// Re-reads the file if it is not a known version (incrementally when possible, see
    /// ``SuiteFormat/reread(previous:previousMembers:entries:values:spellings:current:)``, else with a
    /// full parse) into `document`, and returns the new version, not known yet (see ``makeKnown(_:)``).
    /// `gate` sees every read before anything is applied (see ``WatchEvent/ReadGate``).
    func reread(_ document: inout Document, gate: WatchEvent.ReadGate?) -> FileRead {
        if isUnchangedOnDisk { return .unchanged }
        let snapshot: SuiteFileIO.Snapshot?
        do throws(DefaultsError) {
            snapshot = try SuiteFileIO.readSnapshot(url)
        } catch {
            return .unreadable(error)
        }
        if let gate, !gate(snapshot.map { Self.isBlank($0.bytes) } ?? true) { return .unchanged }
        guard let snapshot else {
            return .adopted(
                adopt(&document, contents: [:], bytes: nil, spellings: JSONNumberSpellings(), identity: nil))
        }
        // The bytes read are kept, for the next re-read to compare with (see `rereadIncrementally`).
        var bytes: [UInt8]?
        if document.bytes != nil {
            let newBytes = [UInt8](snapshot.bytes)
            if var version = rereadIncrementally(&document, newBytes, identity: snapshot.identity) {
                version.isBlank = Self.isBlank(snapshot.bytes)
                return .adopted(version)
            }
            bytes = newBytes
        }
        var spellings = JSONNumberSpellings()
        let contents: [ExactKey: DefaultsValue]
        do throws(DefaultsError) {
            contents = try format.decode(snapshot.bytes, fileURL: url, spellings: &spellings)
        } catch {
            if let gate, !gate(true) { return .unchanged }
            return .broken(recordBroken(error, identity: snapshot.identity))
        }
        // Copied after the parse on a first read (as opening did before), not before it.
        if bytes == nil { bytes = [UInt8](snapshot.bytes) }
        var version = adopt(
            &document, contents: contents, bytes: bytes, spellings: spellings, identity: snapshot.identity)
        version.isBlank = Self.isBlank(snapshot.bytes)
        return .adopted(version)
    }

    /// A fully read version goes into the document; every key may differ from memory.
    private func adopt(
        _ document: inout Document, contents: [ExactKey: DefaultsValue], bytes: [UInt8]?,
        spellings: JSONNumberSpellings, identity: FileIdentity?
    ) -> AdoptedVersion {
        document.values = contents
        document.entries = nil
        document.bytes = bytes
        document.members = nil
        document.spellings = spellings
        return AdoptedVersion(contents: contents, changedKeys: nil, identity: identity)
    }

    /// The re-read that parses only the members whose bytes differ from those of the bytes last read or
    /// written (see ``SuiteIndex``). Returns `nil` (the document unchanged) when the full
    /// parse must decide: no previous bytes, a file that does not scan, a changed member that does not
    /// parse, duplicate keys or `null`. The sorted entries a write kept are handed back to be released
    /// once observers have heard (their fragments point into the previous bytes, so they are not kept).
    private func rereadIncrementally(_ document: inout Document, _ bytes: [UInt8], identity: FileIdentity)
        -> AdoptedVersion?
    {
        guard let previousBytes = document.bytes else { return nil }
        var spellings = document.spellings
        let outcome = previousBytes.withUnsafeBufferPointer { previous in
            bytes.withUnsafeBufferPointer { current in
                format.reread(
                    previous: previous, previousMembers: document.members, entries: document.entries,
                    values: &document.values, spellings: &spellings, current: current)
            }
        }
        guard let outcome else { return nil }
        let released = document.entries.take()
        document.bytes = bytes
        document.members = outcome.members
        document.spellings = spellings
        return AdoptedVersion(
            contents: document.values, changedKeys: outcome.changed, identity: identity, released: released)
    }

    /// Whether the file holds nothing but whitespace (an empty suite, or the first moment of a save).
    static func isBlank(_ bytes: Data) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }

    // MARK: Known versions

    /// Makes `identity` the known version, after memory has merged it (so a check that finds it known
    /// finds memory holding it). It parsed, so no broken version is kept.
    func makeKnown(_ identity: FileIdentity?) {
        known.withLock {
            $0.identity = identity
            $0.brokenIdentity = nil
            $0.brokenError = nil
            $0.adopting = nil
        }
    }

    /// Records that the version `identity` does not parse; whether that is news (a new version of the file
    /// or a new error) decides whether it is published.
    func recordBroken(_ error: DefaultsError, identity: FileIdentity) -> BrokenVersion {
        known.withLock { known in
            defer {
                known.brokenError = error
                known.brokenIdentity = identity
            }
            return BrokenVersion(error: error, isNews: known.brokenIdentity != identity || known.brokenError != error)
        }
    }
}
