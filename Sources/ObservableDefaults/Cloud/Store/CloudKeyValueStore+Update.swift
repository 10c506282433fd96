import Foundation

extension CloudKeyValueStore {
    // MARK: Atomic updates

    /// Atomically replaces the value of `key` with what `transform` makes of it, across every machine
    /// sharing the store: no other writer's change can slip in between the read and the write.
    ///
    /// ```swift
    /// try store.update(forKey: "launches") { current in
    ///     .integer((current?.integerValue ?? 0) + 1)
    /// }
    /// ```
    ///
    /// - **Online** (an etcd store whose last contact with the cluster succeeded), `transform` runs on the
    ///   value the store holds (a write of the key not uploaded yet included) and the result is stored with a
    ///   compare-and-swap on the key's modification revision; when another machine changed the key first,
    ///   `transform` runs again on the server's value, until the swap succeeds. The call returns once the
    ///   server has the value.
    /// - **Offline** (the cluster cannot be reached), in a batch (``performBatchUpdates(_:)``), and in a
    ///   development or local-only store, it applies to memory at once and returns. An etcd store keeps the
    ///   update with the key's unsent write and, when another machine changed the key before the upload, runs
    ///   `transform` again on the server's value at upload time, so no update is lost while the process
    ///   lives. The local copy on disk holds the value, not `transform`: if the process ends before the
    ///   upload, the next process uploads the value as a plain write — stored if nobody changed the key
    ///   meanwhile, otherwise the server's value wins and the loss is reported on the error channel.
    ///
    /// The iCloud-shaped observers of this store, ``observe(keys:prefix:_:)``, do not hear the update (it is
    /// this store's own write); other machines, this process's `@ObservableCloud` objects and the observers
    /// of a scope, ``observe(keys:prefix:scope:_:)``, hear one change of the key. When the value it ran on came
    /// from another machine (memory had not heard of that change yet), observers hear that as a server change.
    ///
    /// `transform` may run more than once, on the calling thread or the store's sync thread, so it should
    /// only compute; `nil` removes the key. It must not call ``update(forKey:_:)``, ``synchronize()`` or
    /// ``performBatchUpdates(_:)`` of this store.
    /// - Returns: the value stored: on the server (online), or in memory (offline, in a batch, local stores).
    /// - Throws: a ``DefaultsError`` when the result cannot be stored (a value JSON cannot hold; past
    ///   ``limits``, which is also announced as a quota violation), when the server's value of the key
    ///   cannot be read, or for a reserved key (`.observable-defaults/…`); then nothing changed.
    @discardableResult
    public func update(forKey key: String, _ transform: @escaping @Sendable (DefaultsValue?) -> DefaultsValue?)
        throws(DefaultsError) -> DefaultsValue?
    {
        do {
            return try update(forKey: key, skipping: nil) { transform($0) }
        } catch let error as DefaultsError {
            throw error
        } catch {
            throw DefaultsError(.cloud, message: "the update failed: \(error)", key: key)
        }
    }

    /// ``update(forKey:_:)`` with values converted to `type`: `transform` gets `nil` when the key is
    /// missing or does not convert.
    ///
    /// ```swift
    /// try store.update(Int.self, forKey: "launches") { ($0 ?? 0) + 1 }
    /// ```
    @discardableResult
    public func update<T: DefaultsValueConvertible & Sendable>(
        _ type: T.Type, forKey key: String, _ transform: @escaping @Sendable (T?) -> T?
    ) throws(DefaultsError) -> T? {
        let stored = try update(forKey: key) { current in
            transform(current.flatMap(T.init(defaultsValue:)))?.defaultsValue
        }
        return stored.flatMap(T.init(defaultsValue:))
    }

    /// ``update(forKey:_:)`` for this process's writers: not announced to the observer `skipping` (the
    /// updating object's own), and `transform` may throw (its error is thrown, nothing changed; run again
    /// at upload, a throwing step leaves the value as it is and is reported).
    func update(
        forKey key: String, skipping: Int?, _ transform: @escaping @Sendable (DefaultsValue?) throws -> DefaultsValue?
    ) throws -> DefaultsValue? {
        if Self.isReserved(key) { throw Self.reservedKeyError(key) }
        let checked: @Sendable (DefaultsValue?) throws -> DefaultsValue? = { current in
            guard let value = try transform(current).map(JSONRepresentation.normalize) else { return nil }
            try SuiteFormat.json.validate(value, forKey: key, fileURL: nil)
            return value
        }
        let (id, inBatch) = core.state.withLock { state in
            defer { state.nextStep += 1 }
            return (state.nextStep, state.openBatch != nil)
        }
        let step = CloudUpdateStep(id: id, transform: checked)
        if let sync, !inBatch, let result = sync.perform(CloudUpdateRequest(key: key, step: step, skipping: skipping)) {
            return try result.get()
        }
        let value = try core.applyUpdateLocally(key, step, skipping: skipping, syncs: sync != nil)
        sync?.control.wake()
        return value
    }

    // MARK: Batches

    /// Runs `body` and uploads every write made meanwhile (through this store, from any thread) as one
    /// etcd transaction when the outermost batch ends: other machines see all of its keys change at one
    /// revision, in one change notification, or none of them. Batches nest; `body`'s result is returned.
    ///
    /// ```swift
    /// store.performBatchUpdates {
    ///     store.set("db2.internal", forKey: "host")
    ///     store.set(5433, forKey: "port")
    /// }
    /// ```
    ///
    /// Memory and this process's objects have each write at once, as without a batch, and the local copy
    /// keeps them with their batch, so a batch written offline (or cut short by the end of the process)
    /// still goes up as one transaction.
    ///
    /// - **Conflicts.** The transaction compares every key with the revision its write was based on. When
    ///   another machine changed one of them first, the batch is one write that lost: the server wins for
    ///   all of its keys (observers hear a server change of those whose value goes back), as for a single
    ///   write. Atomic updates in the batch, ``update(forKey:_:)``, run again on the server's values instead
    ///   and go up in one transaction.
    /// - **Size.** etcd takes at most `--max-txn-ops` operations in one transaction (128 unless changed;
    ///   ``EtcdConfiguration/maxTransactionOperations``). A bigger batch goes up in parts of at most that
    ///   many keys, in key order, and the store says so on its error channel.
    ///
    /// A write of a key whose batch waits for upload joins that batch; an update in a batch applies to
    /// memory at once (see ``update(forKey:_:)``). Development and local-only stores have nothing to
    /// upload: `body` just runs.
    public func performBatchUpdates<R>(_ body: () throws -> R) rethrows -> R {
        core.state.withLock { state in
            if state.batchDepth == 0 { state.openBatch = Int64.random(in: 1...Int64.max) }
            state.batchDepth += 1
        }
        defer {
            let closed = core.state.withLock { state -> Bool in
                state.batchDepth -= 1
                guard state.batchDepth == 0 else { return false }
                state.openBatch = nil
                return true
            }
            if closed { sync?.control.wake() }
        }
        return try body()
    }

    // MARK: Reserved keys

    /// Keys under this prefix belong to the library (an update's marker in etcd): never written, read or
    /// announced as values.
    static let reservedKeyPrefix = ".observable-defaults/"

    /// Whether `key` is one of the library's own (``reservedKeyPrefix``).
    static func isReserved(_ key: String) -> Bool { key.hasPrefix(reservedKeyPrefix) }

    /// The error of a write of a reserved key.
    static func reservedKeyError(_ key: String) -> DefaultsError {
        DefaultsError(
            .unsupportedValue, message: "keys starting with '\(reservedKeyPrefix)' are reserved for the library",
            key: key)
    }
}
