import Foundation

/// Writing a suite's pending changes into its file: read-modify-write under the cross-process lock.
extension SuiteStorage {
    /// A read-modify-write of one key: `transform` gets the key's value as the file holds it (with this
    /// process's pending changes), read under the cross-process lock, and returns the new one (`nil`
    /// removes the key).
    struct AtomicUpdate {
        var key: ExactKey
        var transform: (DefaultsValue?) -> DefaultsValue?
    }

    /// What a write found and did, for the announcements made after the locks are released.
    struct WriteOutcome {
        /// Keys other processes changed since our last look.
        var outsideChanges: Set<ExactKey> = []
        /// The key an ``AtomicUpdate`` changed in memory.
        var updatedKey: ExactKey?
        /// The value an ``AtomicUpdate`` stored.
        var updatedValue: DefaultsValue?
        var observers: [Observer] = []
    }

    /// ``persist()`` for callers without a way to throw: the failure is on the error channel already.
    func persistReportingErrors() {
        _ = try? persist()
    }

    /// Writes pending changes into the file: a key-granular read-modify-write under the cross-process
    /// lock. Keys other processes changed since our last look are kept (and announced as outside changes).
    /// A file that does not parse is never overwritten: the changes stay pending and the error is thrown.
    /// Whenever changes stay pending, a retry is scheduled (see ``scheduleRetry(after:)``), and a failure not
    /// reported yet is published on the error channel.
    func persist() throws(DefaultsError) {
        _ = try write(update: nil)
    }

    /// Runs ``AtomicUpdate`` `update` together with the pending changes, in one locked write; returns the
    /// stored value. Nothing changes when the write fails.
    func update(_ update: AtomicUpdate) throws(DefaultsError) -> DefaultsValue? {
        try write(update: update).updatedValue
    }

    private func write(update: AtomicUpdate?) throws(DefaultsError) -> WriteOutcome {
        // Handlers run after the file-access lock is released: one may set a key, which writes through
        // and takes that lock again.
        var newlyBroken: DefaultsError?
        let outcome: WriteOutcome
        do {
            outcome = try withFileAccess { () throws(DefaultsError) in
                // Starts over when the file was replaced under a removed lock file (see SuiteFileIO.replace).
                var attempts = 0
                while true {
                    do throws(DefaultsError) {
                        return try writePending(&newlyBroken, update: update)
                    } catch {
                        attempts += 1
                        if error != SuiteFileIO.changedUnderneath || attempts == 100 { throw error }
                    }
                }
            }
        } catch {
            if let newlyBroken { publish(newlyBroken) } else { reportWriteFailure(error) }
            scheduleRetry(after: error)
            // Changes waiting for a broken file to parse again are written as soon as it does.
            updateWatching()
            throw error
        }
        if !outcome.outsideChanges.isEmpty { Self.notify(outcome.observers, keys: outcome.outsideChanges, origin: .outside) }
        if let key = outcome.updatedKey { Self.notify(outcome.observers, keys: [key], origin: .thisProcess) }
        recordWriteSuccess()
        return outcome
    }

    func withFileAccess<R>(_ body: () throws(DefaultsError) -> R) throws(DefaultsError) -> R {
        fileAccess.lock()
        defer { fileAccess.unlock() }
        return try body()
    }

    /// The body of ``persist()``, run holding `fileAccess`; returns the outside changes to announce.
    /// `newlyBroken` receives a parse error of the file that has not been published yet.
    ///
    /// Only code holding `fileAccess` reads or changes `fileValues`, `fileEntries`, `fileBytes` and
    /// `fileIdentity`, so the file's contents are moved out of the state, changed in place (no copy of the
    /// whole suite, no sorting it again, and only changed entries encoded again) and moved back: as
    /// written, or as they were when the write fails.
    func writePending(_ newlyBroken: inout DefaultsError?, update: AtomicUpdate? = nil) throws(DefaultsError) -> WriteOutcome {
        var contents: [ExactKey: DefaultsValue] = [:]
        var entries: [Entry]?
        var previousBytes: [UInt8]?
        var spellings = JSONNumberSpellings()
        let snapshot = state.withLock { state -> (pending: [ExactKey: DefaultsValue?], identity: FileIdentity?, synchronize: Bool, waitLimit: Duration)? in
            if state.pending.isEmpty && update == nil { return nil }
            spellings = state.numberSpellings
            swap(&contents, &state.fileValues)
            swap(&entries, &state.fileEntries)
            swap(&previousBytes, &state.fileBytes)
            state.fileMembers = nil
            return (state.pending, state.fileIdentity, state.synchronizesToDisk, state.lockWaitLimit)
        }
        guard case let (pending, knownIdentity, synchronize, waitLimit)? = snapshot else { return WriteOutcome() }
        // When the file changed since our last read or write: what it held then, and what it holds now.
        var reread: (previous: [ExactKey: DefaultsValue], current: [ExactKey: DefaultsValue])?
        var replaced: [(key: ExactKey, old: DefaultsValue?)] = []
        do {
            let paths = try SuiteFileIO.checkedWritePaths(for: fileURL.path, fileURL: fileURL)
            return try SuiteLock.withLock(at: paths.lock, fileURL: fileURL, waitLimit: waitLimit) { () throws(DefaultsError) -> WriteOutcome in
                let existing = FileStatus.ifPresent(at: paths.file)
                if existing.map(FileIdentity.init) != knownIdentity {
                    let current = try decodeCurrentFile(&newlyBroken, spellings: &spellings)
                    reread = (contents, current)
                    contents = current
                    entries = nil
                    previousBytes = nil
                }
                var changes = pending
                var updatedValue: DefaultsValue?
                if let update {
                    // Pending changes first: the transform sees this process's latest value too.
                    let current = pending[update.key] ?? contents[update.key]
                    updatedValue = update.transform(current).map(format.normalize)
                    changes[update.key] = .some(updatedValue)
                }
                replaced.reserveCapacity(changes.count)
                for (key, value) in changes {
                    let old = if let value { contents.updateValue(value, forKey: key) } else { contents.removeValue(forKey: key) }
                    replaced.append((key, old))
                    if entries != nil { Self.update(&entries!, key: key, value: value) }
                }
                if entries == nil {
                    entries = SuiteFormat.sortedEntries(of: contents)
                }
                let bytes = try format.encodeBytes(
                    &entries!, reusing: previousBytes, capacity: Int(knownIdentity?.size ?? 0) + 256,
                    spellings: spellings, fileURL: fileURL)
                let identity = try SuiteFileIO.replace(paths, with: bytes, existing: existing, synchronize: synchronize, lockWaitLimit: waitLimit)
                StaleTemporaryFiles.cleanUpOnce(in: paths.directory)
                return state.withLock { state in
                    for (key, written) in pending where state.pending[key].map({ $0 == written }) == true {
                        state.pending.removeValue(forKey: key)
                    }
                    var outcome = WriteOutcome()
                    if case let (previous, current)? = reread {
                        for key in Set(previous.keys).union(current.keys)
                        where previous[key] != current[key] && pending[key] == nil && state.pending[key] == nil
                            && key != update?.key && state.values[key] != current[key] {
                            state.values[key] = current[key]
                            outcome.outsideChanges.insert(key)
                        }
                    }
                    // A change another thread made meanwhile (still pending) comes after the update.
                    if let update, state.pending[update.key] == nil {
                        outcome.updatedValue = updatedValue
                        if state.values[update.key] != updatedValue {
                            state.values[update.key] = updatedValue
                            outcome.updatedKey = update.key
                        }
                    }
                    state.adoptFileVersion(
                        values: &contents, entries: entries.take(), bytes: bytes, members: nil, spellings: spellings,
                        identity: identity)
                    if !outcome.outsideChanges.isEmpty || outcome.updatedKey != nil {
                        outcome.observers = Array(state.observers.values)
                    }
                    return outcome
                }
            }
        } catch {
            // Put back the contents as last read or written; the sorted entries are rebuilt next time.
            if case let (previous, _)? = reread {
                contents = previous
            } else {
                for (key, old) in replaced.reversed() {
                    if let old { contents[key] = old } else { contents.removeValue(forKey: key) }
                }
            }
            state.withLock { swap(&$0.fileValues, &contents) }
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

    /// Reads and decodes the file as it is now (an absent file is empty). A parse error is recorded,
    /// handed back in `newlyBroken` the first time this version of the file fails (to be published once
    /// the locks are released), then thrown. `spellings` receives the file's number spellings (see
    /// ``JSONNumberSpellings``).
    func decodeCurrentFile(
        _ newlyBroken: inout DefaultsError?, spellings: inout JSONNumberSpellings
    ) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        guard let snapshot = try SuiteFileIO.readSnapshot(fileURL) else {
            spellings = JSONNumberSpellings()
            return [:]
        }
        do {
            return try format.decode(snapshot.bytes, fileURL: fileURL, spellings: &spellings)
        } catch {
            if recordBrokenFile(error, identity: snapshot.identity) { newlyBroken = error }
            throw error
        }
    }

    /// Records that the file does not parse; returns whether this is news (a new version of the file or a
    /// new error), which the caller publishes.
    func recordBrokenFile(_ error: DefaultsError, identity: FileIdentity) -> Bool {
        state.withLock { state -> Bool in
            defer {
                state.fileError = error
                state.brokenIdentity = identity
            }
            return state.brokenIdentity != identity || state.fileError != error
        }
    }
}
