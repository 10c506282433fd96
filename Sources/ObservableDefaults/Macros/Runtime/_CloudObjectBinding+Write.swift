import Foundation
import Observation

/// The generated setter of an `@ObservableCloud` property.
extension _CloudObjectBinding {
    /// A property write: `willSet`, the copy and the store's memory updated inside Observation's
    /// `withMutation` for that property only, `didSet`.
    ///
    /// The copy then holds what a new object would read: assigning `nil` to an Optional removes the key,
    /// and the property reads the declaration default. Assigning the current value notifies nobody. A value
    /// that cannot be encoded, or that the store refuses (NaN, or past its ``CloudLimits``: also announced
    /// as a quota violation), is reported on the store's error channel; the property and the store stay
    /// unchanged and the property's observers hear nothing.
    ///
    /// The copy changes with the store's memory, under the store's lock. The write reaches the other
    /// objects on the store in this process, not this object's own observer (unless another property of
    /// it shares the key). With `syncImmediately`, the store is asked to upload at once; the caller never
    /// waits for the network.
    @inlinable
    public func set<Host: Observation.Observable & AnyObject, Value>(
        _ newValue: Value, slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)? = nil, didSet: ((Value) -> Void)? = nil
    ) {
        let target = cloudWriteTarget(for: slot.key)
        let encoded: DefaultsValue?
        do {
            encoded = try slot.codec.encode(newValue)
        } catch {
            Self.reportUnencodable(Value.self, error, to: target)
            return
        }
        guard let prepared = Self.accepted(encoded, by: target) else { return }
        let stored = prepared.value
        let next = stored == nil
            ? Self.fallback(slot, in: target) : _DefaultsSlot<Value>.State(value: newValue, stored: stored)
        let old = slot.snapshot
        let copyChanges = old.stored != next.stored
        guard copyChanges || target.store.value(forKey: target.fullKey) != stored else { return }
        if copyChanges {
            willSet?(newValue)
            registrar.willSet(host, keyPath: keyPath)
        }
        // Refused only when another write filled the store since `accepted`; then nothing changed.
        let written = Self.write(prepared, to: target) {
            if copyChanges { slot.store(next) }
        }
        if copyChanges {
            registrar.didSet(host, keyPath: keyPath)
            if written { didSet?(old.value) }
        }
    }

    /// Where a property write goes: the store, the full key, the observer the write is not announced to
    /// (the object's own, unless another property shares the key), and whether to upload at once.
    @usableFromInline
    struct CloudWriteTarget {
        @usableFromInline let store: CloudKeyValueStore
        @usableFromInline let fullKey: String
        let skippedObserver: Int?
        let syncImmediately: Bool
    }

    @usableFromInline
    func cloudWriteTarget(for key: String) -> CloudWriteTarget {
        let (store, prefix, observer, sharedKeys, syncImmediately) = writeTarget
        let fullKey = prefix + key
        let shared = !sharedKeys.isEmpty && sharedKeys.contains(fullKey)
        return CloudWriteTarget(store: store, fullKey: fullKey, skippedObserver: shared ? nil : observer, syncImmediately: syncImmediately)
    }

    @usableFromInline
    static func reportUnencodable(_ type: Any.Type, _ error: any Error, to target: CloudWriteTarget) {
        target.store.core.report(DefaultsError(
            .unsupportedValue, message: "cannot encode a value of type \(type): \(error)", key: target.fullKey))
    }

    /// `stored` prepared for the store (in its form, encoded once) when the store accepts it now, else `nil`
    /// after reporting the refusal as the store's `set` does.
    @usableFromInline
    static func accepted(_ stored: DefaultsValue?, by target: CloudWriteTarget) -> CloudPreparedWrite? {
        let checked = target.store.prepare(stored, forKey: target.fullKey)
            .flatMap { prepared in target.store.refusal(of: prepared, forKey: target.fullKey).map { .failure($0) } ?? .success(prepared) }
        switch checked {
        case .success(let prepared): return prepared
        case .failure(let refusal):
            target.store.report(refusal, key: target.fullKey)
            return nil
        }
    }

    /// What the property reads when its key is absent: the declaration default.
    @usableFromInline
    static func fallback<Value>(_ slot: _DefaultsSlot<Value>, in target: CloudWriteTarget) -> _DefaultsSlot<Value>.State {
        slot.fallback(from: target.store, fullKey: target.fullKey)
    }

    /// Writes the key through the store (running `alongside` under its lock when accepted) and, with
    /// `syncImmediately`, asks it to upload now. Returns whether the write was accepted.
    @usableFromInline
    static func write(_ prepared: CloudPreparedWrite, to target: CloudWriteTarget, alongside: () -> Void) -> Bool {
        let written = target.store.commit(prepared, forKey: target.fullKey, skipping: target.skippedObserver, alongside: alongside)
        if written, target.syncImmediately { target.store.uploadNow() }
        return written
    }
}
