import Foundation

extension CloudKeyValueStore {
    // MARK: Reading (memory only)

    /// The value stored for `key`, else its registered default (``register(defaults:)-([String:DefaultsValue])``),
    /// else `nil`. Dates and data read back as their JSON strings, as in a JSON suite.
    public func value(forKey key: String) -> DefaultsValue? {
        storedValue(forKey: key) ?? core.registeredDefault(forKey: key)
    }

    /// The value stored for `key` (written here, or from the server), ignoring registered defaults.
    public func storedValue(forKey key: String) -> DefaultsValue? { core.state.withLock { $0.values[key] } }

    /// The value for `key` converted to `type`: the stored value if it converts, else the registered default
    /// if it converts, else `nil`. A value of the wrong type never hides a usable default.
    public func value<T: DefaultsValueConvertible>(_ type: T.Type, forKey key: String) -> T? {
        if let stored = storedValue(forKey: key), let converted = T(defaultsValue: stored) { return converted }
        return core.registeredDefault(forKey: key).flatMap(T.init(defaultsValue:))
    }

    /// The value for `key` as a Foundation object (`String`, `Int`, `Double`, `Bool`, `[Any]`, `[String: Any]`).
    public func object(forKey key: String) -> Any? { value(forKey: key)?.foundationObject }
    /// The string for `key`, or `nil`.
    public func string(forKey key: String) -> String? { value(String.self, forKey: key) }
    /// The integer for `key`, or 0.
    public func longLong(forKey key: String) -> Int64 { value(Int64.self, forKey: key) ?? 0 }
    /// The number for `key`, or 0.
    public func double(forKey key: String) -> Double { value(Double.self, forKey: key) ?? 0 }
    /// The boolean for `key`, or `false`.
    public func bool(forKey key: String) -> Bool { value(Bool.self, forKey: key) ?? false }
    /// The data for `key` (stored as base64 text), or `nil`.
    public func data(forKey key: String) -> Data? { value(Data.self, forKey: key) }
    /// The array for `key` as Foundation objects, or `nil`.
    public func array(forKey key: String) -> [Any]? { value(forKey: key)?.arrayValue?.map(\.foundationObject) }
    /// The dictionary for `key` as Foundation objects, or `nil`.
    public func dictionary(forKey key: String) -> [String: Any]? {
        value(forKey: key)?.dictionaryValue?.mapValues(\.foundationObject)
    }

    /// Every key and value as Foundation objects, registered defaults included (see ``values()``).
    public var dictionaryRepresentation: [String: Any] { values().mapValues(\.foundationObject) }

    /// Every key and value: the stored values over the registered defaults.
    public func values() -> [String: DefaultsValue] {
        let stored = core.state.withLock { $0.values }
        return core.registeredDefaults.merging(stored) { _, stored in stored }
    }

    // MARK: Writing

    /// Stores `value` for `key` (`nil` removes it): memory has it when this returns, and the local copy's
    /// save starts at once in the background; an etcd store uploads it in the background. A write past
    /// ``limits`` changes nothing and is announced
    /// with ``CloudChangeReason/quotaViolation``; a value JSON cannot hold (NaN) is reported on the error
    /// channel and changes nothing.
    public func set(_ value: DefaultsValue?, forKey key: String) {
        write(value, forKey: key, skipping: nil)
    }

    /// ``set(_:forKey:)`` for this process's writers: `alongside` runs under the store's lock when the
    /// write is accepted (a property's copy changes with memory), and the write is announced on the
    /// internal channel of `@ObservableCloud` objects, except to the observer `skipping` (the writer's own).
    /// Returns whether the write was accepted (also when the store held the value already).
    @discardableResult
    func write(_ value: DefaultsValue?, forKey key: String, skipping: Int?, alongside: () -> Void = {}) -> Bool {
        switch prepare(value, forKey: key) {
        case .failure(let refusal):
            report(refusal, key: key)
            return false
        case .success(let prepared):
            return commit(prepared, forKey: key, skipping: skipping, alongside: alongside)
        }
    }

    /// `value` in the store's form (dates and data as JSON text) with its JSON text, encoded once for the
    /// limits, the size and the upload; a value JSON cannot hold is refused.
    func prepare(_ value: DefaultsValue?, forKey key: String) -> Result<CloudPreparedWrite, WriteRefusal> {
        if Self.isReserved(key) { return .failure(.invalid(Self.reservedKeyError(key))) }
        let value = value.map(JSONRepresentation.normalize)
        if let value {
            do { try SuiteFormat.json.validate(value, forKey: key, fileURL: nil) } catch {
                return .failure(.invalid(error))
            }
        }
        return .success(CloudPreparedWrite(value: value, text: value.map(CloudValueText.encode)))
    }

    /// Why the store would refuse `prepared` under `key` now (past ``limits``); `nil` when it fits. The
    /// limits are checked again when it is committed.
    func refusal(of prepared: CloudPreparedWrite, forKey key: String) -> WriteRefusal? {
        guard prepared.value != nil else { return nil }
        return core.state.withLock { state in
            core.limits.violation(
                key: key, valueBytes: prepared.text?.count, sizes: state.sizes, totalBytes: state.totalBytes
            )
            .map(WriteRefusal.overLimits)
        }
    }

    /// Writes a prepared value: under the store's lock, the limits, `alongside`, memory, the pending upload
    /// and the announcement to this process's objects; then wakes the upload and the local copy's saver.
    /// `uploadingNow` also ends a back-off under way (an object with `syncImmediately: true`), in the same
    /// wake-up. Returns whether the write was accepted (also when the store held the value already).
    func commit(
        _ prepared: CloudPreparedWrite, forKey key: String, skipping: Int?, uploadingNow: Bool = false,
        alongside: () -> Void
    ) -> Bool {
        let (value, text) = (prepared.value, prepared.text)
        let syncs = sync != nil
        let refusal = core.state.withLock { state -> String?? in
            if value != nil,
                let why = core.limits.violation(
                    key: key, valueBytes: text?.count, sizes: state.sizes, totalBytes: state.totalBytes)
            {
                return .some(why)
            }
            alongside()
            // Held it already: nothing to do, unless the local copy is still to be read (it may hold another value).
            guard state.setValue(value, forKey: key, text: text) || state.localCopyUnread else { return .some(nil) }
            if state.localCopyUnread { state.writtenBeforeCopyRead.insert(key) }
            state.writeTimes[key] = CloudState.wallClockNow()
            if syncs {
                let base = state.pending[key]?.baseRevision ?? state.serverRevisions[key] ?? 0
                state.pending[key] = PendingWrite(
                    value: value, baseRevision: base, generation: state.nextGeneration, text: text,
                    batch: state.batchForWrite(of: key))
                state.nextGeneration += 1
            }
            core.announceLocalWrite(key, skipping: skipping)
            return nil
        }
        switch refusal {
        case .some(.some(let why)):
            reportOverLimits(key: key, why)
            return false
        case .some(.none):
            if uploadingNow { sync?.control.wakeNow() }  // earlier writes may be waiting out a back-off
            return true
        case .none:
            core.writeMirror?(key, value)
            // The upload does not wait for the local copy: both start now.
            if let sync {
                sync.wake(forWriteOf: key, cuttingBackOff: uploadingNow)
            } else {
                core.saveLocalCopy(.localWrite(key))
            }
            return true
        }
    }

    /// Reports a refused write as ``set(_:forKey:)`` does: on the error channel, and a write past the limits
    /// also as a quota violation of `key`.
    func report(_ refusal: WriteRefusal, key: String) {
        switch refusal {
        case .invalid(let error): core.report(error)
        case .overLimits(let why): reportOverLimits(key: key, why)
        }
    }

    private func reportOverLimits(key: String, _ why: String) {
        core.report(core.overLimitsError(key, why))
        core.announce([key], reason: .quotaViolation)
    }

    /// Stores any property-list object (`String`, numbers, `Bool`, `Date`, `Data`, `URL`, arrays,
    /// dictionaries); `nil` removes the key. An object of another type is reported on the error channel.
    public func set(_ object: Any?, forKey key: String) {
        guard let object else { return set(DefaultsValue?.none, forKey: key) }
        guard let value = DefaultsValue(any: object) else {
            core.report(
                DefaultsError(
                    .unsupportedValue, message: "a \(type(of: object)) is not a property-list value", key: key))
            return
        }
        set(value, forKey: key)
    }

    /// Stores a string (`nil` removes the key).
    public func set(_ string: String?, forKey key: String) { set(string.map(DefaultsValue.string), forKey: key) }
    /// Stores data, as base64 text (`nil` removes the key).
    public func set(_ data: Data?, forKey key: String) { set(data.map(DefaultsValue.data), forKey: key) }
    /// Stores an array of property-list objects (`nil` removes the key).
    public func set(_ array: [Any]?, forKey key: String) { set(array as Any?, forKey: key) }
    /// Stores a dictionary of property-list objects (`nil` removes the key).
    public func set(_ dictionary: [String: Any]?, forKey key: String) { set(dictionary as Any?, forKey: key) }
    /// Stores an integer.
    public func set(_ value: Int64, forKey key: String) { set(DefaultsValue.integer(Int(value)), forKey: key) }
    /// Stores a number.
    public func set(_ value: Double, forKey key: String) { set(DefaultsValue.double(value), forKey: key) }
    /// Stores a boolean.
    public func set(_ value: Bool, forKey key: String) { set(DefaultsValue.bool(value), forKey: key) }

    /// Removes `key`.
    public func removeObject(forKey key: String) { set(DefaultsValue?.none, forKey: key) }
}

/// A value checked and encoded for a cloud write (``CloudKeyValueStore/prepare(_:forKey:)``).
@usableFromInline
struct CloudPreparedWrite {
    /// The value in the store's form; `nil` removes the key.
    @usableFromInline let value: DefaultsValue?
    /// Its JSON text, as stored in etcd; `nil` for a removal.
    let text: Data?
}

/// Why a cloud store refuses a write.
enum WriteRefusal: Error {
    /// A value JSON cannot hold (NaN, infinity).
    case invalid(DefaultsError)
    /// Past the store's ``CloudLimits``: why.
    case overLimits(String)
}
