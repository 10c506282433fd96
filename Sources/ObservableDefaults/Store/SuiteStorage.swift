import Foundation
import Synchronization

/// The one in-memory copy of a suite file in this process, shared by every ``DefaultsSuite`` handle on
/// that file: it coordinates memory, observers and the error channel (``State``) with the file
/// (``SuiteFile``).
///
/// Memory (``SuiteMemory``) is the file's contents with this process's not-yet-written changes on top. A local
/// change updates memory and notifies observers at once, then is written through under the cross-process
/// lock (``persist()``); a change on disk is re-read, merged into memory, and only the keys that differ are
/// announced (``reloadFromDisk(gate:)``).
final class SuiteStorage: Sendable {
    /// Everything kept under the storage's one lock. Memory, observers and errors share it because a change
    /// must become readable and be announced to exactly the observers registered before it, and a version
    /// that parses must be readable in the same step that ends its file error.
    struct State {
        /// What readers see: the file's contents with the changes made here that are not in the file yet.
        var memory = SuiteMemory()
        var registered: [ExactKey: DefaultsValue] = [:]
        /// The values of the suite's other layers (managed, arguments, system, global…), merged.
        var layers = SuiteLayers(sources: [], fileIndex: 0)
        var observers = SuiteObservers()
        var errors = SuiteErrorChannel()
        var retry = RetrySchedule()
        var writeOptions = SuiteFile.WriteOptions()
        /// Open ``performBatch(_:)`` calls: changes are written when the last one closes.
        var batchDepth = 0
    }

    let fileURL: URL
    let format: SuiteFormat
    /// Memory, observers and errors: the suite as this process sees it (the file lives in ``file``).
    let state = Locked(State())
    /// The file: its known version, and writing and re-reading it.
    let file: SuiteFile
    /// Tells the storage about changes to the file while it is watched.
    let watcher: any FileWatching
    /// Runs retries of failed writes and re-reads of a file that could not be read, after their delay.
    let scheduler: any DelayScheduler
    /// The file's registration with ``watcher`` while it is watched (see ``updateWatching()``).
    let watching = Locked<WatchToken?>(nil)
    /// The layers the suite reads through, in precedence order (``DefaultsLayer/file`` among them).
    let layers: [DefaultsLayer]
    /// The sources of the layers other than the file, in precedence order (see ``SuiteLayers``).
    let layerSources: [LayerSource]
    /// Whether the suite is among the subscribers of its live layer sources' watches (it is watched).
    let layersWatched = Atomic(false)
    /// Whether a layer above the file may hide some key (``SuiteLayers/mayShadow``), read without the lock
    /// by an object's property write; set under the lock with every change of the layers.
    let layersMayShadow = Atomic(false)

    /// Opens the storage and loads the file. Throws for problems with the path itself (a directory where
    /// the file should be, no permission to read); a file whose contents do not parse is not fatal: the
    /// suite starts empty and ``fileError`` reports it. Nor is a file that cannot be read for a reason
    /// that may pass (no descriptor left, no memory): the suite starts empty, ``fileError`` says why, and
    /// the file is read again until it can be (see ``readAgainUntilReadable(after:)``). `watcher` watches
    /// the file while it has cross-process observers; `scheduler` runs the retries. `layers` (already
    /// validated) are read in `places`; a layer file that cannot be used is reported, not thrown. `path`:
    /// `fileURL`'s, when the caller has it.
    init(
        fileURL: URL, path: String? = nil, format: SuiteFormat, layers: [DefaultsLayer] = [.file],
        places: LayerPlaces? = nil,
        watcher: any FileWatching = FileWatcher.shared, scheduler: any DelayScheduler = DelayedWork.shared
    ) throws(DefaultsError) {
        self.fileURL = fileURL
        self.format = format
        self.watcher = watcher
        self.scheduler = scheduler
        self.layers = layers
        let sources: (sources: [LayerSource], fileIndex: Int)
        if layers == [.file] {
            sources = ([], 0)
        } else {
            let path = path ?? fileURL.path
            sources = LayerSource.sources(
                for: layers, name: Self.suiteName(ofPath: path), filePath: path, places: places ?? .current())
        }
        layerSources = sources.sources
        file = SuiteFile(url: fileURL, format: format)
        if !layerSources.isEmpty { loadLayers(fileIndex: sources.fileIndex) }
        switch read(gate: nil) {
        case .unchanged:
            // No file yet: nothing to load.
            return
        case .unreadable(let error) where error.isTransient:
            state.withLock { $0.errors.reportFileError(error) }.send()
            readAgainUntilReadable()
        case .unreadable(let error):
            throw error
        case .broken(let announcement):
            // Published like any later error; nobody observes yet, so new error observers get it at once.
            announce(announcement)
        case .adopted:
            break
        }
        PendingChangesAtExit.install()
    }

    /// The name of the file at `path` without its extension, by string (URL's `deletingPathExtension` costs
    /// more than the rest of working out the layers).
    static func suiteName(ofPath path: String) -> String {
        let bytes = path.utf8
        let name = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes[bytes.index(after: $0)...] } ?? bytes[...]
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else {
            return String(decoding: name, as: UTF8.self)
        }
        return String(decoding: name[..<dot], as: UTF8.self)
    }

    /// A storage released with changes it could not write tries once more, and says on standard error
    /// what is lost if that fails too (see ``PendingChangesAtExit``).
    deinit {
        PendingChangesAtExit.writeOrReport(self)
        if let token = watching.withLock({ $0 }) { watcher.unwatch(token) }
        if layersWatched.load(ordering: .acquiring) {
            for (index, source) in layerSources.enumerated() {
                if let key = source.watchKey { LayerWatch.unsubscribe(key, id: ObjectIdentifier(self), index: index) }
            }
        }
    }

    // MARK: Reading

    /// The effective value of `key` (the layers and the file), else its registered default.
    func value(forKey key: String) -> DefaultsValue? {
        let key = ExactKey(key)
        return state.withLock { $0.layers.effective(key, file: $0.memory[key]) ?? $0.registered[key] }
    }

    /// The effective value of `key` (the layers and the file), without registered defaults.
    func layeredValue(forKey key: String) -> DefaultsValue? {
        let key = ExactKey(key)
        return state.withLock { $0.layers.effective(key, file: $0.memory[key]) }
    }

    /// The value of the highest layer below the file that has `key`, else its registered default: what the
    /// key reads once the file no longer holds it (unless a higher layer has it).
    func fallbackValue(forKey key: String) -> DefaultsValue? {
        let key = ExactKey(key)
        return state.withLock { $0.layers.entryBelow(key)?.value ?? $0.registered[key] }
    }

    func storedValue(forKey key: String) -> DefaultsValue? {
        let key = ExactKey(key)
        return state.withLock { $0.memory[key] }
    }

    var storedValues: [ExactKey: DefaultsValue] { state.withLock { $0.memory.values } }
    /// Every key of every layer and the file merged, as readers see them (without registered defaults).
    var layeredValues: [ExactKey: DefaultsValue] {
        state.withLock { $0.layers.merged(over: $0.memory.values, known: $0.registered.keys) }
    }
    /// The file's contents as this process last read or wrote them.
    var fileContents: [ExactKey: DefaultsValue] { file.knownValues }
    var registeredDefaults: [ExactKey: DefaultsValue] { state.withLock { $0.registered } }
    var hasPendingChanges: Bool { state.withLock { $0.memory.hasPendingChanges } }

    var lockWaitLimit: Duration {
        get { state.withLock { $0.writeOptions.lockWaitLimit } }
        set { state.withLock { $0.writeOptions.lockWaitLimit = newValue } }
    }

    var synchronizesToDisk: Bool {
        get { state.withLock { $0.writeOptions.synchronize } }
        set { state.withLock { $0.writeOptions.synchronize = newValue } }
    }

    // MARK: Changing

    /// Applies changes (`nil` removes a key) to memory, notifies observers of the keys that really changed,
    /// and writes them through unless a batch is open.
    func apply(_ changes: [ExactKey: DefaultsValue?]) {
        var changes = changes
        for case let (key, value?) in changes where !isWritable(value, forKey: key.string) {
            changes.removeValue(forKey: key)
        }
        var refused: [DefaultsError] = []
        let (changed, visible, observers, writeNow) = state.withLock {
            state -> (Set<ExactKey>, Set<ExactKey>, [SuiteObserver], Bool) in
            var changed = Set<ExactKey>()
            var visible = Set<ExactKey>()
            for (key, newValue) in changes {
                if let forced = state.layers.forced(key) {
                    refused.append(forcedKeyError(key, forced))
                    continue
                }
                let old = state.memory[key]
                if state.memory.set(newValue.map(format.normalize), forKey: key) {
                    changed.insert(key)
                    if state.layers.fileChangeIsVisible(key, old: old, new: state.memory[key]) { visible.insert(key) }
                }
            }
            return (changed, visible, state.observers.hearing(anyOf: visible), state.batchDepth == 0)
        }
        for error in refused { report(error) }
        guard !changed.isEmpty else { return }
        if !visible.isEmpty { SuiteObservers.notify(observers, keys: visible, origin: .thisProcess) }
        if writeNow { persistReportingErrors() }
    }

    /// ``apply(_:)`` for one key, the common case: no dictionary or set is built (a key written again before
    /// its change landed, as inside a batch, is hashed once; see ``SuiteMemory``),
    /// and only observers whose filter passes the key are called. `validated`: the caller has checked
    /// ``isWritable(_:forKey:)`` already (an object of the macros, before changing its copy).
    ///
    /// For an object of the macros: `alongside` runs holding the state lock, whether or not memory changes,
    /// so the object's copy changes in the same order as memory when threads write the key at once; it gets
    /// the key's ``PendingHandle``, which the object keeps and brings back as `handle` with its next write of
    /// the key (a write with a current handle does not look the key up; see
    /// ``SuiteMemory/set(_:forKey:handle:)``). The observer `skipping` (the object's own) is not told, because
    /// the object already changed its copy.
    func apply(
        _ newValue: consuming DefaultsValue?, forKey string: String, validated: Bool = false,
        skipping skipped: UInt64? = nil, handle kept: PendingHandle? = nil,
        alongside: (PendingHandle?) -> Void = { _ in }
    ) {
        // Moved into memory (`take()`), not copied: the value passes from the caller to the map once (checked
        // here rather than through a binding of its own, which the optimizer does not always fold away).
        var normalized: DefaultsValue?
        switch consume newValue {
        case .some(let value):
            if !validated && !isWritable(value, forKey: string) { return }
            normalized = format.normalize(value)
        case .none:
            normalized = nil
        }
        let key = ExactKey(string)
        var refused: LayerEntry?
        let delivery = state.withLock { state -> (observers: [SuiteObserver], writeNow: Bool)? in
            // A forced key is refused before anything changes (an object's copy included).
            if let forced = state.layers.forced(key) {
                refused = forced
                return nil
            }
            var handle = kept
            // The old value only matters when a layer below shows through the file's absence.
            let below = state.layers.entryBelow(key)?.value
            let old = below != nil ? state.memory[key] : nil
            let changed = state.memory.set(normalized.take(), forKey: key, handle: &handle)
            alongside(handle)
            guard changed else { return nil }
            // Written to the file, but readers see the same value: a higher layer hides the file's, or the
            // file now holds (or no longer holds) what the layer below gives.
            if state.layers.shadows(key) || below != nil && (old ?? below) == (state.memory[key] ?? below) {
                return ([], state.batchDepth == 0)
            }
            return (state.observers.hearing(key, except: skipped), state.batchDepth == 0)
        }
        if let refused { report(forcedKeyError(key, refused)) }
        guard let delivery else { return }
        if !delivery.observers.isEmpty { SuiteObservers.notify(delivery.observers, key: key, origin: .thisProcess) }
        if delivery.writeNow { persistReportingErrors() }
    }

    /// Whether the format can write `value` and read it back; if not, the error is reported and the value
    /// must not be stored (see ``SuiteFormat/validate(_:forKey:fileURL:)``). Objects of the macros ask
    /// before they change their copy, so a refused value changes neither the suite nor the property.
    func isWritable(_ value: DefaultsValue, forKey key: String) -> Bool {
        // Most writes: no call, no copy of the file's URL.
        if format.acceptsUnderAnyKey(value) { return true }
        do {
            try format.validate(value, forKey: key, fileURL: fileURL)
            return true
        } catch {
            report(error)
            return false
        }
    }

    func removeAll() {
        let keys = state.withLock { Array($0.memory.values.keys) }
        apply(Dictionary(uniqueKeysWithValues: keys.map { ($0, DefaultsValue?.none) }))
    }

    /// Adds registered defaults; observers hear about keys whose effective value changed as a result.
    func register(_ defaults: [ExactKey: DefaultsValue]) {
        let (changed, observers) = state.withLock { state -> (Set<ExactKey>, [SuiteObserver]) in
            var changed = Set<ExactKey>()
            for (key, value) in defaults {
                let normalized = format.normalize(value)
                if state.layers.effective(key, file: state.memory[key]) == nil && state.registered[key] != normalized {
                    changed.insert(key)
                }
                state.registered[key] = normalized
            }
            return (changed, state.observers.hearing(anyOf: changed))
        }
        if !changed.isEmpty { SuiteObservers.notify(observers, keys: changed, origin: .thisProcess) }
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
}
