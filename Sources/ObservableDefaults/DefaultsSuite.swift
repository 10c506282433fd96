import Foundation

/// A settings suite: one JSON or property-list file, read into memory once and kept in sync with disk.
///
/// The API reads like Foundation's `UserDefaults`:
///
/// ```swift
/// let suite = try DefaultsSuite(name: "com.example.daemon")
/// suite.set(8, forKey: "workers")
/// suite.integer(forKey: "workers")          // 8, from memory
/// ```
///
/// - Reads never touch the disk. Every handle on the same file in a process shares one in-memory storage,
///   so all readers in a process are always coherent.
/// - A `set` updates memory, notifies observers in this process, and writes the file before it returns
///   (write-through), as a key-granular read-modify-write under an advisory lock, replacing the file
///   atomically. Use ``performBatchUpdates(_:)`` to make many changes with one write.
/// - Changes made by other processes or by hand reach observers that use
///   ``DefaultsObservationScope/allProcesses`` (the file is watched with inotify while they exist).
/// - A file that does not parse is never overwritten: the last good values stay, the error is published on
///   the error channel (``observeErrors(_:)``, ``errors()``, ``fileError``), and changes made meanwhile are
///   written once the file parses again.
public final class DefaultsSuite: Sendable, CustomStringConvertible {
    let storage: SuiteStorage

    /// The suite's file.
    public var fileURL: URL { storage.fileURL }

    /// The suite's name: the file name without its extension.
    public var name: String { storage.fileURL.deletingPathExtension().lastPathComponent }

    /// The suite's file format.
    public var format: SuiteFormat { storage.format }

    /// The layers the suite reads through, in precedence order (see ``DefaultsLayer``).
    public var layers: [DefaultsLayer] { storage.layers }

    /// Opens (creating on first write) the suite `name` in `directory`, or in ``defaultDirectory`` when
    /// `directory` is `nil`, reading through the ``DefaultsLayer/standard`` layers. The directory is created
    /// (0700) if it is missing.
    ///
    /// The file is `<name>.json`, or an existing `<name>.plist` when there is no `<name>.json`.
    /// - Throws: ``DefaultsError`` for an invalid name (empty, `/`, NUL, `.`, `..`, over 225 bytes), a directory that cannot
    ///   be created, or a suite path that is a directory or cannot be read. A file whose contents do not parse
    ///   does not throw, nor one that cannot be read only for now (no descriptor left): see ``fileError``.
    public convenience init(name: String, directory: URL? = nil) throws(DefaultsError) {
        try self.init(name: name, directory: directory, format: nil, layers: DefaultsLayer.standard)
    }

    /// Opens the suite `name` in `directory` (or ``defaultDirectory``) stored in `format`, reading through
    /// `layers` in precedence order (see ``DefaultsLayer``; ``DefaultsLayer/file`` exactly once). The
    /// environment variables that place layers (`XDG_CONFIG_DIRS`, `OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY`)
    /// are read now.
    /// - Throws: as ``init(name:directory:)``, and ``DefaultsError/Kind/invalidLayers`` for a bad list.
    public convenience init(
        name: String, directory: URL? = nil, format: SuiteFormat? = nil,
        layers: [DefaultsLayer] = DefaultsLayer.standard
    ) throws(DefaultsError) {
        try SuiteLocation.validate(name: name)
        let directory = directory ?? Self.defaultDirectory
        try SuiteLocation.createDirectory(directory)
        let fileURL = SuiteLocation.fileURL(name: name, directory: directory, preferredFormat: format)
        try DefaultsLayer.validate(layers, fileURL: fileURL)
        try self.init(
            storage: SuiteRegistry.storage(for: fileURL, format: format ?? Self.format(of: fileURL), layers: layers))
    }

    /// Opens the suite stored in the file at `fileURL`, reading through the ``DefaultsLayer/standard``
    /// layers. A `.plist` extension selects the property-list format; anything else is JSON. The file's
    /// directory must exist.
    public convenience init(fileURL: URL) throws(DefaultsError) {
        try self.init(fileURL: fileURL, layers: DefaultsLayer.standard)
    }

    /// Opens the suite stored in the file at `fileURL`, reading through `layers` (see
    /// ``init(name:directory:format:layers:)``). The layers' files are named after the file's name
    /// without its extension.
    public convenience init(fileURL: URL, layers: [DefaultsLayer]) throws(DefaultsError) {
        let directory = fileURL.deletingLastPathComponent()
        try SuiteLocation.validate(fileName: fileURL.lastPathComponent, fileURL: fileURL)
        try DefaultsLayer.validate(layers, fileURL: fileURL)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw DefaultsError(
                .fileSystem, message: "the suite's directory does not exist", fileURL: fileURL, errorNumber: ENOENT)
        }
        try self.init(storage: SuiteRegistry.storage(for: fileURL, format: Self.format(of: fileURL), layers: layers))
    }

    /// A handle on `storage` (the registry's, or one made apart from it with its own watcher).
    init(storage: SuiteStorage) {
        self.storage = storage
    }

    private static func format(of fileURL: URL) -> SuiteFormat {
        SuiteFormat(fileExtension: fileURL.pathExtension) ?? .json
    }

    /// The suite named after this process (or `$OBSERVABLE_DEFAULTS_STANDARD_SUITE`) in
    /// ``defaultDirectory``. If that cannot be opened, a suite in the temporary directory is used (and if
    /// even that fails, one backed by `/dev/null` that keeps values in memory only), and the reason is
    /// published on its error channel: a program never crashes over its settings.
    public static let standard: DefaultsSuite = {
        let name = SuiteLocation.standardSuiteName()
        do {
            return try DefaultsSuite(name: name)
        } catch {
            let fallbackDirectory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "observable-defaults-\(getuid())")
            // Reading /dev/null gives an empty suite and writing next to it fails and is reported, so this
            // last resort cannot throw in practice.
            let suite =
                (try? DefaultsSuite(name: name, directory: fallbackDirectory))
                ?? (try! DefaultsSuite(fileURL: URL(fileURLWithPath: "/dev/null"), layers: [.file]))
            if let error = error as? DefaultsError { suite.storage.report(error) }
            return suite
        }
    }()

    /// The directory suites opened by name live in: `$OBSERVABLE_DEFAULTS_DIRECTORY`, else
    /// `$XDG_CONFIG_HOME/observable-defaults`, else `~/.config/observable-defaults`.
    public static var defaultDirectory: URL { SuiteLocation.defaultDirectory() }

    /// `DefaultsSuite(<path of the suite's file>)`.
    public var description: String { "DefaultsSuite(\(fileURL.path))" }

    // MARK: Reading values

    /// The effective value for `key` (the first layer that has it: see ``DefaultsLayer``), else its
    /// registered default, else `nil`.
    public func value(forKey key: String) -> DefaultsValue? {
        storage.value(forKey: key)
    }

    /// The value stored in the file for `key` (or written here and pending), ignoring the other layers and
    /// registered defaults.
    public func storedValue(forKey key: String) -> DefaultsValue? {
        storage.storedValue(forKey: key)
    }

    /// The value for `key` converted to `type`: the effective value if it converts, else the registered
    /// default if it converts, else `nil`. A value of the wrong type never hides a usable default.
    public func value<T: DefaultsValueConvertible>(_ type: T.Type, forKey key: String) -> T? {
        if let stored = storage.layeredValue(forKey: key), let converted = T(defaultsValue: stored) { return converted }
        return storage.registeredDefaults[ExactKey(key)].flatMap(T.init(defaultsValue:))
    }

    /// The value for `key` as a Foundation object (`String`, `Int`, `Double`, `Bool`, `Date`, `Data`,
    /// `[Any]`, `[String: Any]`), like `UserDefaults.object(forKey:)`.
    public func object(forKey key: String) -> Any? {
        value(forKey: key)?.foundationObject
    }

    /// Every key of every layer and its effective value, merged over the registered defaults, as Foundation
    /// objects.
    ///
    /// Keys that differ only by Unicode normalisation (`"caf\u{E9}"`, `"cafe\u{301}"`) are two keys of
    /// the suite but one `String` key here; ``storedKeys`` lists each, and ``object(forKey:)`` reads each.
    public func dictionaryRepresentation() -> [String: Any] {
        values().mapValues(\.foundationObject)
    }

    /// Every key of every layer and its effective value, merged over the registered defaults (keys as in
    /// ``dictionaryRepresentation()``). An environment layer's variables count under the keys the other
    /// layers, the file or the registered defaults have.
    public func values() -> [String: DefaultsValue] {
        storage.registeredDefaults.merging(storage.layeredValues) { _, stored in stored }.stringKeyed
    }

    /// The keys stored in the file (plus pending ones), without registered defaults. Keys compare by
    /// their exact bytes, so two keys that differ only by Unicode normalisation are both listed.
    public var storedKeys: [String] { storage.storedValues.keys.map(\.string) }

    // MARK: Writing values

    /// Stores `value` for `key` (`nil` removes it). Memory and in-process observers see it at once; the file
    /// holds it when this returns, unless a batch is open or the write failed (then the error is published
    /// on the error channel and the change stays pending until ``flush()`` or the next write succeeds).
    public func set(_ value: DefaultsValue?, forKey key: String) {
        storage.apply(value, forKey: key)
    }

    /// Stores a Foundation object (`String`, numbers, `Bool`, `Date`, `Data`, `URL`, arrays and
    /// string-keyed dictionaries of those); `nil` removes the key. An unsupported object is not stored and
    /// an ``DefaultsError/Kind/unsupportedValue`` error is published instead of crashing.
    public func set(_ value: Any?, forKey key: String) {
        guard let value else { return set(DefaultsValue?.none, forKey: key) }
        guard let converted = DefaultsValue(any: value) else {
            storage.report(
                DefaultsError(
                    .unsupportedValue,
                    message:
                        "cannot store a value of type \(type(of: value)); expected a string, number, boolean, date, data, URL, array or dictionary",
                    fileURL: fileURL, key: key))
            return
        }
        set(converted, forKey: key)
    }

    /// Stores an integer.
    public func set(_ value: Int, forKey key: String) { set(.integer(value), forKey: key) }
    /// Stores a double.
    public func set(_ value: Double, forKey key: String) { set(.double(value), forKey: key) }
    /// Stores a float (as a double).
    public func set(_ value: Float, forKey key: String) { set(.double(Double(value)), forKey: key) }
    /// Stores a boolean.
    public func set(_ value: Bool, forKey key: String) { set(.bool(value), forKey: key) }
    /// Stores a URL as its absolute string; `nil` removes the key.
    public func set(_ url: URL?, forKey key: String) { set(url.map { .string($0.absoluteString) }, forKey: key) }

    /// Removes the stored value for `key` (its registered default, if any, shows through).
    public func removeObject(forKey key: String) { set(DefaultsValue?.none, forKey: key) }

    /// Removes every stored key, with one write.
    public func removeAll() { storage.removeAll() }

    /// Adds fallback values for keys that are not stored. Registered defaults live in memory only and are
    /// never written to the file.
    public func register(defaults: [String: DefaultsValue]) { storage.register(defaults.exactKeyed) }

    /// Adds fallback values given as Foundation objects; unsupported objects are skipped and reported.
    public func register(defaults: [String: Any]) {
        register(defaults: DefaultsValue.registrable(defaults, fileURL: fileURL) { storage.report($0) })
    }

    /// The registered defaults.
    public var registeredDefaults: [String: DefaultsValue] { storage.registeredDefaults.stringKeyed }

    /// Runs `body` and writes every change it made (through any handle on this file, from any thread) in
    /// one file write at the end. Observers still hear each change at once. Batches nest.
    public func performBatchUpdates<R>(_ body: () throws -> R) rethrows -> R {
        try storage.performBatch(body)
    }

    /// Atomically replaces the value of `key` with what `transform` makes of it, across processes: the
    /// closure gets the current value as the file holds it (read under the cross-process lock, with this
    /// process's pending changes applied) and returns the new one (`nil` removes the key). No other
    /// writer of the file, in any process, can slip in between the read and the write.
    ///
    /// ```swift
    /// try suite.update(forKey: "tags") { current in
    ///     guard case .array(let tags)? = current else { return .array([.string("new")]) }
    ///     return .array(tags + [.string("new")])
    /// }
    /// ```
    ///
    /// `transform` runs holding the suite's locks: it must not use this suite (that would deadlock) and
    /// should be quick. It may run more than once (when the file is replaced under a removed lock file,
    /// the write starts over), so it should only compute. Pending changes are written in the same file
    /// write.
    /// - Returns: the value stored.
    /// - Throws: the ``DefaultsError`` that prevented the write (the key is forced by an administrator, the
    ///   lock is held too long, the file does not parse, permission denied, disk full); then nothing was
    ///   changed.
    @discardableResult
    public func update(forKey key: String, _ transform: (DefaultsValue?) -> DefaultsValue?) throws(DefaultsError)
        -> DefaultsValue?
    {
        // `withoutActuallyEscaping` rethrows untyped: the typed error is carried out in a Result.
        if let forced = storage.forcedEntry(key) {
            let error = storage.forcedKeyError(ExactKey(key), forced)
            storage.report(error)
            throw error
        }
        let result = withoutActuallyEscaping(transform) { transform in
            Result { () throws(DefaultsError) in
                try storage.update(SuiteStorage.AtomicUpdate(key: ExactKey(key), transform: transform))
            }
        }
        return try result.get()
    }

    /// ``update(forKey:_:)`` with values converted to `type`: `transform` gets `nil` when the key is
    /// missing or does not convert.
    ///
    /// ```swift
    /// try suite.update(Int.self, forKey: "launches") { ($0 ?? 0) + 1 }
    /// ```
    @discardableResult
    public func update<T: DefaultsValueConvertible>(_ type: T.Type, forKey key: String, _ transform: (T?) -> T?)
        throws(DefaultsError) -> T?
    {
        let stored = try update(forKey: key) { current in
            transform(current.flatMap(T.init(defaultsValue:)))?.defaultsValue
        }
        return stored.flatMap(T.init(defaultsValue:))
    }

    /// Writes changes that are still pending (after a failed write, or while the file was broken).
    /// - Throws: the ``DefaultsError`` that prevents writing (the file does not parse, permission denied,
    ///   disk full); the changes stay pending.
    public func flush() throws(DefaultsError) {
        try storage.persist()
    }

    /// Re-reads the file now if it changed on disk, and the other layers' files, announcing changed keys as
    /// outside changes. Observers of ``DefaultsObservationScope/allProcesses`` get this automatically; call
    /// it to catch up without one.
    public func reload() {
        storage.reloadFromDisk()
        storage.reloadLayers()
    }

    /// Whether changes made here are waiting to be written (see ``flush()``).
    public var hasPendingChanges: Bool { storage.hasPendingChanges }

    /// Whether every write also `fsync`s the file and its directory, so a completed `set` survives power
    /// loss, not only a crash of the process. Off by default; shared by every handle on the file.
    public var synchronizesToDisk: Bool {
        get { storage.synchronizesToDisk }
        set { storage.synchronizesToDisk = newValue }
    }

    /// How long a write waits for another process holding the suite's lock before giving up (default one
    /// second), counted from the last write that landed meanwhile: writers that keep the lock busy while
    /// their writes land are waited for, a holder that gets nothing done is not. The change then stays
    /// pending in memory, the timeout is published on the error channel
    /// (naming the lock file and, when `/proc/locks` tells, the process holding it), and the write is
    /// retried on its own. Shared by every handle on the file.
    public var lockWaitLimit: Duration {
        get { storage.lockWaitLimit }
        set { storage.lockWaitLimit = newValue }
    }

    // MARK: Errors

    /// The failure that keeps changes pending (lock held too long, disk full, permission denied), or
    /// `nil` when every change written so far has landed. Such writes are retried on their own, with a
    /// backoff from 50 ms up to 2 s; ``observeWriteRecovery(_:)`` tells when they land.
    public var writeError: DefaultsError? { storage.writeError }

    /// Calls `handler` whenever changes that had failed to be written (see ``writeError``) land in the
    /// file, on the thread that wrote them.
    public func observeWriteRecovery(_ handler: @escaping @Sendable () -> Void) -> DefaultsObservation {
        let storage = self.storage
        let token = storage.addRecoveryHandler(handler)
        return DefaultsObservation { storage.removeRecoveryHandler(token) }
    }

    /// The current problem with the file's contents (it does not parse), or `nil` when it is healthy.
    public var fileError: DefaultsError? { storage.fileError }

    /// The most recent error published on this suite's error channel, including ones published before
    /// anybody observed errors (for example why ``standard`` had to fall back).
    public var lastError: DefaultsError? { storage.lastError }

    /// The problems that persist now, empty when the suite is healthy: the file does not parse
    /// (``fileError``), changes cannot be written (``writeError``: they are retried), or outside changes
    /// cannot be seen (the suite's directory was removed, or the system refused to watch it). Each clears itself when the problem goes away. A new error observer
    /// (``observeErrors(_:)``, ``errors()``) receives these first.
    public var currentErrors: [DefaultsError] { storage.currentErrors }

    /// Publishes an error on this suite's error channel (used by generated code for wrong-typed values).
    func report(_ error: DefaultsError) { storage.report(error) }
}
