import Foundation

/// Writing pending changes into the file: a key-granular read-modify-write under the cross-process lock.
extension SuiteFile {
    /// A read-modify-write of one key: `transform` gets the key's value as the file holds it (with this
    /// process's pending changes), read under the cross-process lock, and returns the new one (`nil`
    /// removes the key).
    struct AtomicUpdate {
        var key: ExactKey
        var transform: (DefaultsValue?) -> DefaultsValue?
    }

    /// How a write is made, as the suite's settings say.
    struct WriteOptions {
        /// `fsync` the file and its directory.
        var synchronize = false
        /// How long a write waits for the cross-process lock.
        var lockWaitLimit = SuiteLock.defaultWaitLimit
    }

    /// What to write, taken from memory once the document is held.
    struct WriteRequest {
        /// Changes not in the file yet (`nil` value: remove the key).
        var pending: [ExactKey: DefaultsValue?]
        var update: AtomicUpdate?
        var options: WriteOptions
    }

    /// Writes `request` in one transaction (see ``transaction(_:_:)``), starting over when the file was
    /// replaced under a removed lock file (see ``SuiteFileIO/changedUnderneath``). Returns the written
    /// version, not known yet: the caller merges it into memory, then calls ``makeKnown(_:)``. A file that
    /// does not parse is never overwritten: the write fails with its ``BrokenVersion``.
    func write(_ request: WriteRequest, into document: inout Document) throws(WriteFailure) -> AdoptedVersion {
        var attempts = 0
        while true {
            do throws(WriteFailure) {
                return try transaction(&document, request)
            } catch {
                attempts += 1
                if error.error != SuiteFileIO.changedUnderneath || attempts == 100 { throw error }
            }
        }
    }

    /// One attempt of ``write(_:into:)``: under the cross-process lock, catch up with the file if another
    /// process replaced it, apply the changes, encode, replace the file, and keep what the next write
    /// reuses. The document is changed in place (no copy of the whole suite, no sorting it again, and only
    /// changed entries encoded again) and put back as it was when the attempt fails. A JSON file is
    /// edited where its changed members are (see ``JSONSuiteEditor``, ``PropertyListXMLSuiteEditor``): the
    /// rest of its bytes stay as they are.
    private func transaction(_ document: inout Document, _ request: WriteRequest) throws(WriteFailure) -> AdoptedVersion
    {
        var attempt = Attempt(taking: &document, knownIdentity: known.withLock { $0.identity })
        do throws(DefaultsError) {
            let paths = try SuiteFileIO.checkedWritePaths(for: path, fileURL: url)
            return try SuiteLock.withLock(
                at: paths.lock, of: paths.file, fileURL: url, waitLimit: request.options.lockWaitLimit
            ) { () throws(DefaultsError) -> AdoptedVersion in
                let existing = FileStatus.ifPresent(at: paths.file)
                try catchUp(&document, &attempt, existing: existing)
                if format == .propertyList { attempt.findWrittenMembers() }
                let updatedValue = apply(request, to: &document, &attempt)
                let bytes = try encode(document.values, &attempt)
                let identity = try SuiteFileIO.replace(
                    paths, with: bytes, existing: existing, synchronize: request.options.synchronize,
                    lockWaitLimit: request.options.lockWaitLimit,
                    willRename: { written in known.withLock { $0.adopting = written } })
                StaleTemporaryFiles.cleanUpOnce(in: paths.directory)
                attempt.keep(bytes, in: &document)
                return AdoptedVersion(
                    contents: document.values, changedKeys: attempt.outsideChanges, written: request.pending,
                    update: request.update.map { ($0.key, updatedValue) }, identity: identity)
            }
        } catch {
            known.withLock { $0.adopting = nil }
            attempt.rollBack(&document)
            throw WriteFailure(error: error, broken: attempt.broken)
        }
    }

    /// What one attempt took from the document to reuse, and what it needs to put the document back.
    private struct Attempt {
        /// The version the document holds.
        let knownIdentity: FileIdentity?
        var spellings: JSONNumberSpellings
        /// The document's sorted entries, kept up to date by the changes (`nil`: sorted again).
        var entries: [Entry]?
        /// The bytes last read or written (or read by the catch-up): a write edits them; a property list
        /// the editor does not edit reuses their unchanged fragments.
        var previousBytes: [UInt8]?
        /// The top-level members of `previousBytes` when known, then those of the edited bytes.
        var members: [SuiteIndex.Member]?
        /// What the document held before the attempt, put back when it fails.
        let original: (bytes: [UInt8]?, members: [SuiteIndex.Member]?)
        /// The changes to edit into the file, in the order applied (only those that change a value).
        var edits: [(key: ExactKey, value: DefaultsValue?)] = []
        /// When another process changed the file since our last read or write: what it held then, and
        /// what it holds now.
        var caughtUp: (previous: [ExactKey: DefaultsValue], current: [ExactKey: DefaultsValue])?
        /// The values the changes replaced, in order (`nil`: the key was absent).
        var replaced: [(key: ExactKey, old: DefaultsValue?)] = []
        /// The version found not to parse.
        var broken: BrokenVersion?

        init(taking document: inout Document, knownIdentity: FileIdentity?) {
            self.knownIdentity = knownIdentity
            spellings = document.spellings
            entries = document.entries.take()
            previousBytes = document.bytes.take()
            members = document.members.take()
            original = (previousBytes, members)
        }

        /// The members of property-list bytes the writer made last, from its entries' fragments, found
        /// before the changes alter the entries (a removed entry's member must still be found).
        mutating func findWrittenMembers() {
            guard members == nil, let entries, let previousBytes else { return }
            members = previousBytes.withUnsafeBufferPointer {
                PropertyListXMLSuiteIndex.members(ofWritten: $0, entries: entries)
            }
        }

        /// The keys another process changed, as found by the catch-up (empty when there was none).
        var outsideChanges: [ExactKey] {
            guard let caughtUp else { return [] }
            var changed: [ExactKey] = []
            for key in Set(caughtUp.previous.keys).union(caughtUp.current.keys)
            where caughtUp.previous[key] != caughtUp.current[key] {
                changed.append(key)
            }
            return changed
        }

        /// The encoded file is written: the document keeps what the next write reuses.
        mutating func keep(_ bytes: [UInt8], in document: inout Document) {
            document.entries = entries.take()
            document.bytes = bytes
            document.members = members.take()
            document.spellings = spellings
        }

        /// The attempt failed: the document's values go back to what was last read or written (the
        /// sorted entries and bytes are rebuilt next time).
        func rollBack(_ document: inout Document) {
            if let caughtUp {
                // The document keeps no bytes then: its version is not the known one, so the next write
                // reads the file again (see `catchUp`).
                document.values = caughtUp.previous
                return
            }
            document.bytes = original.bytes
            document.members = original.members
            for (key, old) in replaced.reversed() {
                if let old { document.values[key] = old } else { document.values.removeValue(forKey: key) }
            }
        }
    }

    /// When the file on disk is not the version the document holds (another process wrote it),
    /// reads it and makes it the document's contents, so its keys are kept. The file is also read when
    /// the document has not kept its bytes, which the write edits.
    private func catchUp(_ document: inout Document, _ attempt: inout Attempt, existing: FileStatus?)
        throws(DefaultsError)
    {
        let replaced = existing.map(FileIdentity.init) != attempt.knownIdentity
        guard replaced || (existing != nil && attempt.previousBytes == nil) else { return }
        let (current, bytes) = try decodeCurrentFile(&attempt)
        attempt.caughtUp = (document.values, current)
        document.values = current
        attempt.entries = nil
        attempt.members = nil
        attempt.previousBytes = bytes
    }

    /// Applies the pending changes, then the update (which sees them), to the document's values
    /// and sorted entries, recording what each replaced. Returns the update's value.
    private func apply(_ request: WriteRequest, to document: inout Document, _ attempt: inout Attempt) -> DefaultsValue?
    {
        var changes = request.pending
        var updatedValue: DefaultsValue?
        if let update = request.update {
            // Pending changes first: the transform sees this process's latest value too.
            let current = request.pending[update.key] ?? document.values[update.key]
            updatedValue = update.transform(current).map(format.normalize)
            changes[update.key] = .some(updatedValue)
        }
        attempt.replaced.reserveCapacity(changes.count)
        for (key, value) in changes {
            let old =
                if let value { document.values.updateValue(value, forKey: key) } else {
                    document.values.removeValue(forKey: key)
                }
            attempt.replaced.append((key, old))
            if attempt.entries != nil { Self.update(&attempt.entries!, key: key, value: value) }
            // An equal value is not written again: the file keeps the person's text of it.
            if old != value { attempt.edits.append((key, value)) }
        }
        return updatedValue
    }

    /// The new file's bytes: the previous ones with the changed members edited (see ``JSONSuiteEditor`` and
    /// ``PropertyListXMLSuiteEditor``); a property list the editor does not edit (binary, UTF-16) or a new
    /// one is written whole, reusing the unchanged fragments of the bytes last written.
    private func encode(_ values: [ExactKey: DefaultsValue], _ attempt: inout Attempt) throws(DefaultsError) -> [UInt8]
    {
        if format == .json {
            attempt.entries = nil
            guard let previous = attempt.previousBytes,
                var editor = JSONSuiteEditor(bytes: previous, members: attempt.members, spellings: attempt.spellings)
            else {
                attempt.members = nil
                return JSONSuiteEditor.newFile(values, after: attempt.previousBytes, spellings: attempt.spellings)
            }
            editor.apply(attempt.edits)
            attempt.members = editor.members
            return editor.bytes
        }
        if let previous = attempt.previousBytes,
            var editor = PropertyListXMLSuiteEditor(
                bytes: previous,
                members: attempt.members)
        {
            for (key, value) in attempt.edits {
                if let value { try format.validate(value, forKey: key.string, fileURL: url) }
            }
            attempt.entries = nil
            editor.apply(attempt.edits)
            attempt.members = editor.members
            return editor.bytes
        }
        attempt.members = nil
        if attempt.entries == nil {
            attempt.entries = SuiteFormat.sortedEntries(of: values)
        }
        return try format.encodeBytes(
            &attempt.entries!, reusing: attempt.previousBytes, capacity: Int(attempt.knownIdentity?.size ?? 0) + 256,
            spellings: attempt.spellings, fileURL: url)
    }

    /// Reads and decodes the file as it is now (an absent file is empty). A version that does not parse is
    /// recorded in `attempt` and its error thrown. The attempt's spellings become the file's (see
    /// ``JSONNumberSpellings``).
    /// Also returns the bytes read (`nil`: no file).
    private func decodeCurrentFile(_ attempt: inout Attempt) throws(DefaultsError) -> (
        [ExactKey: DefaultsValue], [UInt8]?
    ) {
        guard let snapshot = try SuiteFileIO.readSnapshot(url) else {
            attempt.spellings = JSONNumberSpellings()
            return ([:], nil)
        }
        do {
            let values = try format.decode(snapshot.bytes, fileURL: url, spellings: &attempt.spellings)
            return (values, [UInt8](snapshot.bytes))
        } catch {
            attempt.broken = recordBroken(error, identity: snapshot.identity)
            throw error
        }
    }

    /// Sets (`nil`: removes) `key` in `entries`, which are sorted by the bytes of their keys.
    static func update(_ entries: inout [Entry], key: ExactKey, value: DefaultsValue?) {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if ExactKey(entries[middle].key) < key { low = middle + 1 } else { high = middle }
        }
        let found = low < entries.count && ExactKey(entries[low].key) == key
        switch (value, found) {
        case (let value?, true):
            entries[low].value = value
            entries[low].fragment = nil
        case (let value?, false): entries.insert(Entry(key: key.string, value: value), at: low)
        case (nil, true): entries.remove(at: low)
        case (nil, false): break
        }
    }
}
