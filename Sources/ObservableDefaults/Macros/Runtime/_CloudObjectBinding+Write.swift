import Foundation
import Observation

/// The generated setter of an `@ObservableCloud` property.
extension _CloudObjectBinding {
    /// A property write: `willSet`, the copy and the store's memory updated inside Observation's
    /// `withMutation` for that property only, `didSet` (the algorithm both families share:
    /// `_DefaultsSlot.write(_:to:keyPath:on:registrar:willSet:didSet:)`).
    ///
    /// The copy then holds what a new object would read: assigning `nil` to an Optional removes the key,
    /// and the property reads the declaration default — except in development mode, where the object's values
    /// are its own and the property keeps the `nil`, as in the Apple library. Assigning the current value notifies nobody. A value
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
        slot.write(
            newValue, to: cloudWriteTarget(for: slot.key), keyPath: keyPath, on: host, registrar: registrar,
            willSet: willSet, didSet: didSet)
    }

    /// Where a property write goes: the store, the full key, the observer the write is not announced to
    /// (the object's own, unless another property shares the key), and whether to upload at once.
    @usableFromInline
    struct CloudWriteTarget: _DefaultsWriteTarget {
        /// Not reference counted: the published configuration holding the store outlives the write (see
        /// `_PublishedConfiguration`); reached only through `_withUnsafeGuaranteedRef`.
        let store: Unmanaged<CloudKeyValueStore>
        let fullKey: String
        let skippedObserver: Int?
        let syncImmediately: Bool
        @usableFromInline let keepsAssignedNil: Bool

        @usableFromInline
        func reportUnencodable(_ type: Any.Type, _ error: any Error) {
            store._withUnsafeGuaranteedRef {
                $0.core.report(
                    DefaultsError(
                        .unsupportedValue, message: "cannot encode a value of type \(type): \(error)", key: fullKey))
            }
        }

        /// `stored` prepared for the store (in its form, encoded once) when the store accepts it now, else
        /// `nil` after reporting the refusal as the store's `set` does.
        @usableFromInline
        func accept(_ stored: DefaultsValue?) -> CloudPreparedWrite? {
            store._withUnsafeGuaranteedRef { store in
                let checked = store.prepare(stored, forKey: fullKey)
                    .flatMap { prepared in
                        store.refusal(of: prepared, forKey: fullKey).map { .failure($0) } ?? .success(prepared)
                    }
                switch checked {
                case .success(let prepared): return prepared
                case .failure(let refusal):
                    store.report(refusal, key: fullKey)
                    return nil
                }
            }
        }

        @inlinable
        func storedForm(of accepted: CloudPreparedWrite) -> DefaultsValue? { accepted.value }

        /// The registered default, else the declaration default.
        @usableFromInline
        func fallback<Value>(of slot: _DefaultsSlot<Value>) -> _DefaultsSlot<Value>.State {
            store._withUnsafeGuaranteedRef { slot.fallback(from: $0, fullKey: fullKey) }
        }

        @usableFromInline
        func currentValue() -> DefaultsValue? { store._withUnsafeGuaranteedRef { $0.storedValue(forKey: fullKey) } }

        /// Writes the key through the store (running `alongside` under its lock when accepted) and, with
        /// `syncImmediately`, asks it to upload now (one wake-up of its sync thread either way). Refused only
        /// when another write filled the store since `accept(_:)`; then nothing changed.
        @usableFromInline
        func write(_ accepted: CloudPreparedWrite, alongside: () -> Void) -> Bool {
            store._withUnsafeGuaranteedRef { store in
                store.commit(
                    accepted, forKey: fullKey, skipping: skippedObserver, uploadingNow: syncImmediately,
                    alongside: alongside)
            }
        }
    }

    /// The write target of the property with key `key`, from the published configuration (no lock taken, no
    /// reference counted: the binding keeps every configuration it published).
    @usableFromInline
    func cloudWriteTarget(for key: String) -> CloudWriteTarget {
        let unretained = writeConfiguration.publishedUnretained ?? Unmanaged.passUnretained(currentWriteConfiguration)
        return unretained._withUnsafeGuaranteedRef { configuration in
            let (fullKey, skipped) = _propertyWriteKey(
                key, prefix: configuration.prefix, ownObserver: configuration.observer,
                sharedKeys: configuration.sharedKeys)
            return CloudWriteTarget(
                store: Unmanaged.passUnretained(configuration.store), fullKey: fullKey, skippedObserver: skipped,
                syncImmediately: configuration.syncImmediately,
                keepsAssignedNil: configuration.keepsAssignedNil)
        }
    }
}
