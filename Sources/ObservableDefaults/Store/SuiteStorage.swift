import Foundation
import Synchronization

/// The one in-memory copy of a suite file in this process, shared by every ``DefaultsSuite`` handle on
/// that file.
///
/// Memory is the file's contents with this process's not-yet-written changes (`pending`) on top. A local
/// change updates memory and notifies observers at once, then is written through under the cross-process
/// lock; a change on disk is re-read, diffed against memory, and only the keys that differ are announced.
final class SuiteStorage: Sendable {
    struct Observer {
        /// Cleared when the observation is cancelled and checked just before each handler call.
        let isActive = ActiveFlag()
        var filter: DefaultsKeyFilter
        var scope: DefaultsObservationScope
        var handler: @Sendable (DefaultsChange) -> Void
    }

    final class ActiveFlag: Sendable {
        private let value = Atomic(true)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func clear() { value.store(false, ordering: .releasing) }
    }

    struct State {
        /// What readers see: the file's contents with pending changes applied.
        var values: [String: DefaultsValue] = [:]
        /// The file's contents as last read or written by this process.
        var fileValues: [String: DefaultsValue] = [:]
        /// `fileValues` sorted by key (the order the writers use), once a write has needed them.
        var fileEntries: [Entry]?
        /// The bytes last written, which `fileEntries`' fragments point into.
        var fileBytes: [UInt8]?
        /// The version of the file `fileValues` came from; `nil` when there was no file.
        var fileIdentity: FileIdentity?
        /// The version of the file that failed to parse, so it is reported once, not on every event.
        var brokenIdentity: FileIdentity?
        /// Changes made here that are not in the file yet (`nil` value: the key was removed).
        var pending: [String: DefaultsValue?] = [:]
        var registered: [String: DefaultsValue] = [:]
        var fileError: DefaultsError?
        var lastError: DefaultsError?
        var batchDepth = 0
        var synchronizesToDisk = false
        var observers: [UInt64: Observer] = [:]
        var errorHandlers: [UInt64: @Sendable (DefaultsError) -> Void] = [:]
        var nextToken: UInt64 = 0
    }

    let fileURL: URL
    let format: SuiteFormat
    private let state = Locked(State())
    /// Serialises this process's reads and writes of the file, so a slow re-read can never overwrite
    /// memory with a version older than one just written.
    private let fileAccess = NSLock()
    /// Whether ``FileWatcher`` has this storage (see ``updateWatching()``).
    private let watching = Locked(false)
    /// The sidecar lock file, kept open between writes (used holding `fileAccess`).
    private let lockFile = Locked<SuiteFileIO.OpenLockFile?>(nil)

    typealias Entry = SuiteFormat.Entry

    /// Opens the storage and loads the file. Throws for problems with the path itself (a directory where
    /// the file should be, no permission to read); a file whose contents do not parse is not fatal: the
    /// suite starts empty and ``fileError`` reports it.
    init(fileURL: URL, format: SuiteFormat) throws(DefaultsError) {
        self.fileURL = fileURL
        self.format = format
        SuiteFileIO.removeStaleTemporaryFiles(of: SuiteFileIO.writeTarget(for: fileURL))
        guard let snapshot = try SuiteFileIO.readSnapshot(fileURL) else { return }
        do {
            let contents = try format.decode(snapshot.bytes, fileURL: fileURL)
            state.withLock {
                $0.values = contents
                $0.fileValues = contents
                $0.fileIdentity = snapshot.identity
            }
        } catch {
            state.withLock {
                $0.fileError = error
                $0.brokenIdentity = snapshot.identity
            }
        }
    }

    // MARK: Reading

    func value(forKey key: String) -> DefaultsValue? {
        state.withLock { $0.values[key] ?? $0.registered[key] }
    }

    func storedValue(forKey key: String) -> DefaultsValue? {
        state.withLock { $0.values[key] }
    }

    var storedValues: [String: DefaultsValue] { state.withLock { $0.values } }
    /// The file's contents as this process last read or wrote them (for tests).
    var fileContents: [String: DefaultsValue] {
        (try? withFileAccess { state.withLock { $0.fileValues } }) ?? [:]
    }
    var registeredDefaults: [String: DefaultsValue] { state.withLock { $0.registered } }
    var fileError: DefaultsError? { state.withLock { $0.fileError } }
    var lastError: DefaultsError? { state.withLock { $0.lastError } }
    var hasPendingChanges: Bool { state.withLock { !$0.pending.isEmpty } }

    var synchronizesToDisk: Bool {
        get { state.withLock { $0.synchronizesToDisk } }
        set { state.withLock { $0.synchronizesToDisk = newValue } }
    }

    // MARK: Changing

    /// Applies changes (`nil` removes a key) to memory, notifies observers of the keys that really changed,
    /// and writes them through unless a batch is open.
    func apply(_ changes: [String: DefaultsValue?]) {
        let (changed, observers, writeNow) = state.withLock { state -> (Set<String>, [Observer], Bool) in
            var changed = Set<String>()
            for (key, newValue) in changes {
                let normalized = newValue.map(format.normalize)
                if state.values[key] == normalized { continue }
                state.values[key] = normalized
                state.pending[key] = .some(normalized)
                changed.insert(key)
            }
            return (changed, changed.isEmpty ? [] : Array(state.observers.values), state.batchDepth == 0)
        }
        guard !changed.isEmpty else { return }
        Self.notify(observers, keys: changed, origin: .thisProcess)
        if writeNow { persistReportingErrors() }
    }

    /// ``apply(_:)`` for one key, the common case: no dictionary or set is built unless an observer
    /// needs the key set, and memory is looked up once.
    func apply(_ newValue: DefaultsValue?, forKey key: String) {
        let normalized = newValue.map(format.normalize)
        let delivery = state.withLock { state -> (observers: [Observer], writeNow: Bool)? in
            // An equal value is left as it is (strings equal by canonical equivalence may differ in bytes,
            // and memory keeps what the file holds).
            if let index = state.values.index(forKey: key) {
                if let normalized {
                    if state.values.values[index] == normalized { return nil }
                    state.values.values[index] = normalized
                } else {
                    state.values.remove(at: index)
                }
            } else {
                guard let normalized else { return nil }
                state.values[key] = normalized
            }
            state.pending[key] = .some(normalized)
            return (state.observers.isEmpty ? [] : Array(state.observers.values), state.batchDepth == 0)
        }
        guard let delivery else { return }
        if !delivery.observers.isEmpty { Self.notify(delivery.observers, keys: [key], origin: .thisProcess) }
        if delivery.writeNow { persistReportingErrors() }
    }

    func removeAll() {
        let keys = state.withLock { Array($0.values.keys) }
        apply(Dictionary(uniqueKeysWithValues: keys.map { ($0, DefaultsValue?.none) }))
    }

    /// Adds registered defaults; observers hear about keys whose effective value changed as a result.
    func register(_ defaults: [String: DefaultsValue]) {
        let (changed, observers) = state.withLock { state -> (Set<String>, [Observer]) in
            var changed = Set<String>()
            for (key, value) in defaults {
                let normalized = format.normalize(value)
                if state.values[key] == nil && state.registered[key] != normalized { changed.insert(key) }
                state.registered[key] = normalized
            }
            return (changed, Array(state.observers.values))
        }
        if !changed.isEmpty { Self.notify(observers, keys: changed, origin: .thisProcess) }
    }

    func performBatch<R>(_ body: () throws -> R) rethrows -> R {
        state.withLock { $0.batchDepth += 1 }
        defer {
            let closed = state.withLock { state -> Bool in
                state.batchDepth -= 1
                return state.batchDepth == 0
            }
            if closed { persistReportingErrors() }
        }
        return try body()
    }

    // MARK: Writing

    private func persistReportingErrors() {
        do {
            try persist()
        } catch {
            // A broken file was published when it was found; say it once, not on every write.
            if error != fileError { report(error) }
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

    private func withFileAccess<R>(_ body: () throws(DefaultsError) -> R) throws(DefaultsError) -> R {
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
    private func writePending(_ newlyBroken: inout DefaultsError?) throws(DefaultsError) -> (Set<String>, [Observer]) {
        var contents: [String: DefaultsValue] = [:]
        var entries: [Entry]?
        var previousBytes: [UInt8]?
        let snapshot = state.withLock { state -> (pending: [String: DefaultsValue?], identity: FileIdentity?, synchronize: Bool)? in
            if state.pending.isEmpty { return nil }
            swap(&contents, &state.fileValues)
            swap(&entries, &state.fileEntries)
            swap(&previousBytes, &state.fileBytes)
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
                    var info = stat()
                    let existing: stat? = stat(paths.file, &info) == 0 ? info : nil
                    if existing.map(FileIdentity.init) != knownIdentity {
                        let current = try decodeCurrentFile(&newlyBroken)
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
                    let bytes = format.encodeBytes(&entries!, reusing: previousBytes, capacity: Int(knownIdentity?.size ?? 0) + 256)
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
                        state.fileBytes = bytes
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
    private static func update(_ entries: inout [Entry], key: String, value: DefaultsValue?) {
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
    private func decodeCurrentFile(_ newlyBroken: inout DefaultsError?) throws(DefaultsError) -> [String: DefaultsValue] {
        guard let snapshot = try SuiteFileIO.readSnapshot(fileURL) else { return [:] }
        do {
            return try format.decode(snapshot.bytes, fileURL: fileURL)
        } catch {
            if recordBrokenFile(error, identity: snapshot.identity) { newlyBroken = error }
            throw error
        }
    }

    /// Records that the file does not parse; returns whether this is news (a new version of the file or a
    /// new error), which the caller publishes.
    private func recordBrokenFile(_ error: DefaultsError, identity: FileIdentity) -> Bool {
        state.withLock { state -> Bool in
            defer {
                state.fileError = error
                state.brokenIdentity = identity
            }
            return state.brokenIdentity != identity || state.fileError != error
        }
    }

    // MARK: Reloading

    /// Re-reads the file if it changed since this process last read or wrote it, and announces the keys
    /// whose value differs as outside changes. Pending changes kept while the file was broken are written
    /// once it parses again.
    func reloadFromDisk() {
        fileAccess.lock()
        let current = FileIdentity.of(path: fileURL.path)
        let (known, broken) = state.withLock { ($0.fileIdentity, $0.brokenIdentity) }
        if current == known || (current != nil && current == broken) {
            fileAccess.unlock()
            return
        }
        let contents: [String: DefaultsValue]
        let identity: FileIdentity?
        do {
            if let snapshot = try SuiteFileIO.readSnapshot(fileURL) {
                do {
                    contents = try format.decode(snapshot.bytes, fileURL: fileURL)
                } catch {
                    fileAccess.unlock()
                    if recordBrokenFile(error, identity: snapshot.identity) { publish(error) }
                    return
                }
                identity = snapshot.identity
            } else {
                (contents, identity) = ([:], nil)
            }
        } catch {
            fileAccess.unlock()
            report(error)
            return
        }
        let (changed, observers, mustWritePending) = state.withLock { state -> (Set<String>, [Observer], Bool) in
            var merged = contents
            for (key, value) in state.pending { merged[key] = value }
            let changed = Self.changedKeys(from: state.values, to: merged)
            let wasBroken = state.fileError != nil
            state.values = merged
            state.fileValues = contents
            state.fileEntries = nil
            state.fileBytes = nil
            state.fileIdentity = identity
            state.brokenIdentity = nil
            state.fileError = nil
            return (changed, changed.isEmpty ? [] : Array(state.observers.values), wasBroken && !state.pending.isEmpty)
        }
        fileAccess.unlock()
        if !changed.isEmpty { Self.notify(observers, keys: changed, origin: .outside) }
        if mustWritePending { persistReportingErrors() }
    }

    static func changedKeys(from old: [String: DefaultsValue], to new: [String: DefaultsValue]) -> Set<String> {
        var changed = Set<String>()
        for (key, value) in new where old[key] != value { changed.insert(key) }
        for key in old.keys where new[key] == nil { changed.insert(key) }
        return changed
    }

    // MARK: Observers

    func addObserver(_ observer: Observer) -> UInt64 {
        let token = state.withLock { state -> UInt64 in
            state.nextToken += 1
            state.observers[state.nextToken] = observer
            return state.nextToken
        }
        if observer.scope == .allProcesses && updateWatching() { reloadFromDisk() }
        return token
    }

    func removeObserver(_ token: UInt64) {
        let removed = state.withLock { $0.observers.removeValue(forKey: token) }
        removed?.isActive.clear()
        if removed?.scope == .allProcesses { _ = updateWatching() }
    }

    /// Watches the file while a cross-process observer exists and stops when the last one goes. The
    /// decision and the watcher call happen under one lock, so a first observer added while the last one
    /// is being removed on another thread cannot end up unwatched.
    /// - Returns: whether watching started.
    private func updateWatching() -> Bool {
        watching.withLock { isWatched -> Bool in
            let wanted = state.withLock { $0.observers.values.contains { $0.scope == .allProcesses } }
            guard wanted != isWatched else { return false }
            isWatched = wanted
            if wanted { FileWatcher.shared.watch(self) } else { FileWatcher.shared.unwatch(self) }
            return wanted
        }
    }

    func addErrorHandler(_ handler: @escaping @Sendable (DefaultsError) -> Void) -> UInt64 {
        state.withLock { state in
            state.nextToken += 1
            state.errorHandlers[state.nextToken] = handler
            return state.nextToken
        }
    }

    func removeErrorHandler(_ token: UInt64) {
        _ = state.withLock { $0.errorHandlers.removeValue(forKey: token) }
    }

    /// Publishes an error on the error channel (and keeps file errors as ``fileError``).
    func report(_ error: DefaultsError) {
        publish(error)
    }

    private func publish(_ error: DefaultsError) {
        let handlers = state.withLock { state in
            state.lastError = error
            return Array(state.errorHandlers.values)
        }
        for handler in handlers { handler(error) }
    }

    private static func notify(_ observers: [Observer], keys: Set<String>, origin: DefaultsChangeOrigin) {
        for observer in observers {
            if origin == .outside && observer.scope == .thisProcess { continue }
            if !observer.isActive.isSet { continue }
            let relevant = observer.filter.matching(keys)
            if !relevant.isEmpty { observer.handler(DefaultsChange(keys: relevant, origin: origin)) }
        }
    }
}
