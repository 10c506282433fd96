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

    /// Writes `request` into `document` and the file in one transaction: under the cross-process lock,
    /// the file is re-read if it is not the known version, the changes are applied to its contents and
    /// the result replaces it atomically. Returns the written version, not known yet: the caller merges it
    /// into memory, then calls ``makeKnown(_:)``. A file that does not parse is never overwritten: the
    /// write fails with its ``BrokenVersion``.
    func write(_ request: WriteRequest, into document: inout Document) throws(WriteFailure) -> AdoptedVersion {
        // Starts over when the file was replaced under a removed lock file (see SuiteFileIO.replace).
        var attempts = 0
        var broken: BrokenVersion?
        while true {
            do throws(DefaultsError) {
                return try transaction(&document, request, broken: &broken)
            } catch {
                attempts += 1
                if error != SuiteFileIO.changedUnderneath || attempts == 100 { throw WriteFailure(error: error, broken: broken) }
            }
        }
    }

    /// One attempt of ``write(_:into:)``. The contents are changed in place (no copy of the whole suite,
    /// no sorting it again, and only changed entries encoded again) and put back as they were when the
    /// attempt fails. `broken` receives a version that does not parse.
    private func transaction(
        _ document: inout Document, _ request: WriteRequest, broken: inout BrokenVersion?
    ) throws(DefaultsError) -> AdoptedVersion {
        let knownIdentity = known.withLock { $0.identity }
        var spellings = document.spellings
        var entries = document.entries.take()
        var previousBytes = document.bytes.take()
        document.members = nil
        // When the file changed since our last read or write: what it held then, and what it holds now.
        var reread: (previous: [ExactKey: DefaultsValue], current: [ExactKey: DefaultsValue])?
        var replaced: [(key: ExactKey, old: DefaultsValue?)] = []
        do throws(DefaultsError) {
            let paths = try SuiteFileIO.checkedWritePaths(for: path, fileURL: url)
            return try SuiteLock.withLock(at: paths.lock, of: paths.file, fileURL: url, waitLimit: request.options.lockWaitLimit) { () throws(DefaultsError) -> AdoptedVersion in
                let existing = FileStatus.ifPresent(at: paths.file)
                if existing.map(FileIdentity.init) != knownIdentity {
                    let current = try decodeCurrentFile(spellings: &spellings, broken: &broken)
                    reread = (document.values, current)
                    document.values = current
                    entries = nil
                    previousBytes = nil
                }
                var changes = request.pending
                var updatedValue: DefaultsValue?
                if let update = request.update {
                    // Pending changes first: the transform sees this process's latest value too.
                    let current = request.pending[update.key] ?? document.values[update.key]
                    updatedValue = update.transform(current).map(format.normalize)
                    changes[update.key] = .some(updatedValue)
                }
                replaced.reserveCapacity(changes.count)
                for (key, value) in changes {
                    let old = if let value { document.values.updateValue(value, forKey: key) } else { document.values.removeValue(forKey: key) }
                    replaced.append((key, old))
                    if entries != nil { Self.update(&entries!, key: key, value: value) }
                }
                if entries == nil {
                    entries = SuiteFormat.sortedEntries(of: document.values)
                }
                let bytes = try format.encodeBytes(
                    &entries!, reusing: previousBytes, capacity: Int(knownIdentity?.size ?? 0) + 256,
                    spellings: spellings, fileURL: url)
                let identity = try SuiteFileIO.replace(
                    paths, with: bytes, existing: existing, synchronize: request.options.synchronize, lockWaitLimit: request.options.lockWaitLimit,
                    willRename: { written in known.withLock { $0.adopting = written } })
                StaleTemporaryFiles.cleanUpOnce(in: paths.directory)
                document.entries = entries.take()
                document.bytes = bytes
                document.spellings = spellings
                var outsideChanges: [ExactKey] = []
                if case let (previous, current)? = reread {
                    for key in Set(previous.keys).union(current.keys) where previous[key] != current[key] {
                        outsideChanges.append(key)
                    }
                }
                return AdoptedVersion(
                    contents: document.values, changedKeys: outsideChanges, written: request.pending,
                    update: request.update.map { ($0.key, updatedValue) }, identity: identity)
            }
        } catch {
            known.withLock { $0.adopting = nil }
            // Put back the contents as last read or written; the sorted entries are rebuilt next time.
            if case let (previous, _)? = reread {
                document.values = previous
            } else {
                for (key, old) in replaced.reversed() {
                    if let old { document.values[key] = old } else { document.values.removeValue(forKey: key) }
                }
            }
            throw error
        }
    }

    /// Reads and decodes the file as it is now (an absent file is empty). A version that does not parse
    /// is recorded into `broken`, and its error is thrown. `spellings` receives the file's number
    /// spellings (see ``JSONNumberSpellings``).
    private func decodeCurrentFile(
        spellings: inout JSONNumberSpellings, broken: inout BrokenVersion?
    ) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        guard let snapshot = try SuiteFileIO.readSnapshot(url) else {
            spellings = JSONNumberSpellings()
            return [:]
        }
        do {
            return try format.decode(snapshot.bytes, fileURL: url, spellings: &spellings)
        } catch {
            broken = recordBroken(error, identity: snapshot.identity)
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
