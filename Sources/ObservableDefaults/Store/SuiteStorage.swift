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
        var isWatched = false
    }

    let fileURL: URL
    let format: SuiteFormat
    private let state = Mutex(State())
    /// Serialises this process's reads and writes of the file, so a slow re-read can never overwrite
    /// memory with a version older than one just written.
    private let fileAccess = NSLock()

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
        fileAccess.lock()
        defer { fileAccess.unlock() }
        let (pending, knownIdentity, knownContents, synchronize) = state.withLock {
            ($0.pending, $0.fileIdentity, $0.fileValues, $0.synchronizesToDisk)
        }
        if pending.isEmpty { return }
        let target = SuiteFileIO.writeTarget(for: fileURL)
        let (outsideChanges, observers) = try SuiteFileIO.withExclusiveLock(beside: target) {
            () throws(DefaultsError) -> (Set<String>, [Observer]) in
            var base = knownContents
            var reread = false
            if FileIdentity.of(path: target.path) != knownIdentity {
                base = try decodeCurrentFile()
                reread = true
            }
            var contents = base
            for (key, value) in pending { contents[key] = value }
            let identity = try SuiteFileIO.replace(target, with: try format.encode(contents), synchronize: synchronize)
            return state.withLock { state in
                for (key, written) in pending where state.pending[key].map({ $0 == written }) == true {
                    state.pending.removeValue(forKey: key)
                }
                var outside = Set<String>()
                if reread {
                    for key in Set(state.fileValues.keys).union(base.keys)
                    where state.fileValues[key] != base[key] && pending[key] == nil && state.pending[key] == nil
                        && state.values[key] != base[key] {
                        state.values[key] = base[key]
                        outside.insert(key)
                    }
                }
                state.fileValues = contents
                state.fileIdentity = identity
                state.brokenIdentity = nil
                state.fileError = nil
                return (outside, outside.isEmpty ? [] : Array(state.observers.values))
            }
        }
        if !outsideChanges.isEmpty { Self.notify(observers, keys: outsideChanges, origin: .outside) }
    }

    /// Reads and decodes the file as it is now (an absent file is empty). A parse error is recorded and
    /// reported once per broken version of the file, then thrown.
    private func decodeCurrentFile() throws(DefaultsError) -> [String: DefaultsValue] {
        guard let snapshot = try SuiteFileIO.readSnapshot(fileURL) else { return [:] }
        do {
            return try format.decode(snapshot.bytes, fileURL: fileURL)
        } catch {
            recordBrokenFile(error, identity: snapshot.identity)
            throw error
        }
    }

    private func recordBrokenFile(_ error: DefaultsError, identity: FileIdentity) {
        let isNew = state.withLock { state -> Bool in
            defer {
                state.fileError = error
                state.brokenIdentity = identity
            }
            return state.brokenIdentity != identity || state.fileError != error
        }
        if isNew { publish(error) }
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
                    recordBrokenFile(error, identity: snapshot.identity)
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
        let (token, startWatching) = state.withLock { state -> (UInt64, Bool) in
            state.nextToken += 1
            state.observers[state.nextToken] = observer
            let start = observer.scope == .allProcesses && !state.isWatched
            if start { state.isWatched = true }
            return (state.nextToken, start)
        }
        if startWatching {
            FileWatcher.shared.watch(self)
            reloadFromDisk()
        }
        return token
    }

    func removeObserver(_ token: UInt64) {
        let stopWatching = state.withLock { state -> Bool in
            state.observers.removeValue(forKey: token)?.isActive.clear()
            let stop = state.isWatched && !state.observers.values.contains { $0.scope == .allProcesses }
            if stop { state.isWatched = false }
            return stop
        }
        if stopWatching { FileWatcher.shared.unwatch(self) }
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
