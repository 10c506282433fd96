import Foundation
import Synchronization

/// Writing a suite's pending changes into its file: read-modify-write under the cross-process lock.
extension SuiteStorage {
    func persistReportingErrors() {
        do {
            try persist()
        } catch {
            // A broken file was published when it was found; say it once, not on every write.
            if error != fileError { report(error) }
            // Changes waiting for a broken file to parse again are written as soon as it does.
            updateWatching()
        }
    }

    /// Writes pending changes into the file: a key-granular read-modify-write under the cross-process
    /// lock. Keys other processes changed since our last look are kept (and announced as outside changes).
    /// A file that does not parse is never overwritten: the changes stay pending and the error is thrown.
    func persist() throws(DefaultsError) {
        // Handlers run after the file-access lock is released: one may set a key, which writes through
        // and takes that lock again.
        var newlyBroken: DefaultsError?
        let outsideChanges: Set<String>, observers: [Observer]
        do {
            (outsideChanges, observers) = try withFileAccess { () throws(DefaultsError) in try writePending(&newlyBroken) }
        } catch {
            if let newlyBroken { publish(newlyBroken) }
            throw error
        }
        if !outsideChanges.isEmpty { Self.notify(observers, keys: outsideChanges, origin: .outside) }
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
    func writePending(_ newlyBroken: inout DefaultsError?) throws(DefaultsError) -> (Set<String>, [Observer]) {
        var contents: [String: DefaultsValue] = [:]
        var entries: [Entry]?
        var previousBytes: [UInt8]?
        var spellings = JSONNumberSpellings()
        let snapshot = state.withLock { state -> (pending: [String: DefaultsValue?], identity: FileIdentity?, synchronize: Bool)? in
            if state.pending.isEmpty { return nil }
            spellings = state.numberSpellings
            swap(&contents, &state.fileValues)
            swap(&entries, &state.fileEntries)
            swap(&previousBytes, &state.fileBytes)
            state.fileMembers = nil
            return (state.pending, state.fileIdentity, state.synchronizesToDisk)
        }
        guard case let (pending, knownIdentity, synchronize)? = snapshot else { return ([], []) }
        let paths = SuiteFileIO.SidecarPaths(file: SuiteFileIO.writeTargetPath(for: fileURL.path))
        // When the file changed since our last read or write: what it held then, and what it holds now.
        var reread: (previous: [String: DefaultsValue], current: [String: DefaultsValue])?
        var replaced: [(key: String, old: DefaultsValue?)] = []
        do {
            return try lockFile.withLock { lockFile throws(DefaultsError) in
                try SuiteFileIO.withExclusiveLock(beside: paths, keeping: &lockFile) { () throws(DefaultsError) -> (Set<String>, [Observer]) in
                    if !removedStaleTemporaryFiles.exchange(true, ordering: .relaxed) {
                        SuiteFileIO.removeStaleTemporaryFiles(of: paths.url)
                    }
                    var info = stat()
                    let existing: stat? = stat(paths.file, &info) == 0 ? info : nil
                    if existing.map(FileIdentity.init) != knownIdentity {
                        let current = try decodeCurrentFile(&newlyBroken, spellings: &spellings)
                        reread = (contents, current)
                        contents = current
                        entries = nil
                        previousBytes = nil
                    }
                    replaced.reserveCapacity(pending.count)
                    for (key, value) in pending {
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
                    let identity = try SuiteFileIO.replace(paths, with: bytes, existing: existing, synchronize: synchronize)
                    return state.withLock { state in
                        for (key, written) in pending where state.pending[key].map({ $0 == written }) == true {
                            state.pending.removeValue(forKey: key)
                        }
                        var outside = Set<String>()
                        if case let (previous, current)? = reread {
                            for key in Set(previous.keys).union(current.keys)
                            where previous[key] != current[key] && pending[key] == nil && state.pending[key] == nil
                                && state.values[key] != current[key] {
                                state.values[key] = current[key]
                                outside.insert(key)
                            }
                        }
                        swap(&state.fileValues, &contents)
                        swap(&state.fileEntries, &entries)
                        state.numberSpellings = spellings
                        state.fileBytes = bytes
                        state.fileMembers = nil
                        state.fileIdentity = identity
                        state.brokenIdentity = nil
                        state.fileError = nil
                        return (outside, outside.isEmpty ? [] : Array(state.observers.values))
                    }
                }
            }
        } catch {
            // Put back the contents as last read or written; the sorted entries are rebuilt next time.
            if case let (previous, _)? = reread {
                contents = previous
            } else {
                for (key, old) in replaced {
                    if let old { contents[key] = old } else { contents.removeValue(forKey: key) }
                }
            }
            state.withLock { swap(&$0.fileValues, &contents) }
            throw error
        }
    }

    /// Sets (`nil`: removes) `key` in `entries`, which are sorted by key.
    static func update(_ entries: inout [Entry], key: String, value: DefaultsValue?) {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key < key { low = middle + 1 } else { high = middle }
        }
        let found = low < entries.count && entries[low].key == key
        switch (value, found) {
        case (let value?, true):
            entries[low].value = value
            entries[low].fragment = nil
        case (let value?, false): entries.insert(Entry(key: key, value: value), at: low)
        case (nil, true): entries.remove(at: low)
        case (nil, false): break
        }
    }

    /// Reads and decodes the file as it is now (an absent file is empty). A parse error is recorded,
    /// handed back in `newlyBroken` the first time this version of the file fails (to be published once
    /// the locks are released), then thrown.
    /// `spellings` receives the file's number spellings (see ``JSONNumberSpellings``).
    func decodeCurrentFile(
        _ newlyBroken: inout DefaultsError?, spellings: inout JSONNumberSpellings
    ) throws(DefaultsError) -> [String: DefaultsValue] {
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
