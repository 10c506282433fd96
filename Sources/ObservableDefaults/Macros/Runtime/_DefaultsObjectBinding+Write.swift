import Foundation
import Observation

/// The generated setter of a persisted property.
extension _DefaultsObjectBinding {
    /// A property write: `willSet`, the copy and the suite updated inside Observation's `withMutation` for
    /// that property only, `didSet` (the algorithm both families share:
    /// `_DefaultsSlot.write(_:to:keyPath:on:registrar:willSet:didSet:)`).
    ///
    /// The copy then holds what a new object would read: assigning `nil` to an Optional removes the key, and
    /// the property reads the registered default, else the declaration default. The suite is written
    /// whenever it holds something else than the new value, even when the copy already equals it (an outside
    /// change may not have reached the copy yet); observers are told only when the copy changes.
    /// A value the suite's format cannot store (NaN in a JSON suite, say) is refused as the suite refuses it:
    /// reported on the suite's error channel, the property and the file unchanged.
    ///
    /// The copy changes while the suite's memory changes, under the suite's lock, so threads writing the
    /// property at once leave the copy equal to memory. The change is not announced back to this object's
    /// own suite observer (it would find the copy already equal, at several times the cost of the write),
    /// unless another property of the object shares the key; other observers hear it as usual.
    ///
    /// Inlinable, so it specializes for the property's type in the generated code.
    @inlinable
    public func set<Host: Observation.Observable & AnyObject, Value>(
        _ newValue: Value, slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)? = nil, didSet: ((Value) -> Void)? = nil
    ) {
        slot.write(
            newValue, to: writeTarget(for: slot.key), keyPath: keyPath, on: host, registrar: registrar,
            willSet: willSet, didSet: didSet)
    }

    /// Where a property write goes: the suite, the full key, and the observer the write is not announced
    /// to (the object's own, unless another property shares the key).
    @usableFromInline
    struct WriteTarget: _DefaultsWriteTarget {
        /// Not reference counted: the published configuration holding the suite outlives the write (see
        /// `_PublishedConfiguration`); reached only through `_withUnsafeGuaranteedRef`.
        let suite: Unmanaged<DefaultsSuite>
        let fullKey: String
        let skippedObserver: UInt64?

        /// A suite removes the key of an Optional set to `nil`; the property reads its fallback.
        @usableFromInline var keepsAssignedNil: Bool { false }

        @usableFromInline
        func reportUnencodable(_ type: Any.Type, _ error: any Error) {
            suite._withUnsafeGuaranteedRef {
                $0.report(
                    DefaultsError(
                        .unsupportedValue, message: "cannot encode a value of type \(type): \(error)", key: fullKey))
            }
        }

        /// A value the suite's format can write and read back (else reported, as the suite's `set` does).
        ///
        /// A key a higher layer hides is not the property's to change: a forced key is refused and reported;
        /// for another (a `-key value` argument) the value goes to the file, as with `UserDefaults`, and the
        /// property keeps reading the layer's value. Either way the property is left as it is.
        @usableFromInline
        func accept(_ stored: consuming DefaultsValue?) -> DefaultsValue?? {
            if let value = stored, !suite._withUnsafeGuaranteedRef({ $0.storage.isWritable(value, forKey: fullKey) }) {
                return nil
            }
            let storage = suite._withUnsafeGuaranteedRef { $0.storage }
            if let shadowing = storage.shadowingEntry(fullKey) {
                if shadowing.origin.isForced {
                    storage.report(storage.forcedKeyError(ExactKey(fullKey), shadowing))
                } else {
                    storage.apply(stored, forKey: fullKey, validated: true)
                }
                return nil
            }
            return .some(stored)
        }

        @inlinable
        func storedForm(of accepted: DefaultsValue?) -> DefaultsValue? { accepted }

        /// What the property reads once its key is removed from the file: a layer below the file's value,
        /// else the registered default, else the declaration default.
        @usableFromInline
        func fallback<Value>(of slot: _DefaultsSlot<Value>) -> _DefaultsSlot<Value>.State {
            suite._withUnsafeGuaranteedRef { suite in
                if let below = suite.storage.fallbackValue(forKey: fullKey), let value = slot.codec.decode(below) {
                    return _DefaultsSlot<Value>.State(value: value, stored: below)
                }
                return slot.fallback(from: suite, fullKey: fullKey)
            }
        }

        @usableFromInline
        func currentValue() -> DefaultsValue? { suite._withUnsafeGuaranteedRef { $0.storedValue(forKey: fullKey) } }

        /// Sets the key in the suite's memory (and writes it through unless a batch is open), running
        /// `alongside` under the suite's lock; a suite takes every accepted value.
        @usableFromInline
        func write(_ accepted: DefaultsValue?, alongside: () -> Void) -> Bool {
            write(accepted, handle: nil) { _ in alongside() }
        }

        /// ``write(_:alongside:)`` with the handle on the key's change in the suite's memory that the
        /// property kept: a write with a current one does not look the key up.
        @usableFromInline
        func write(_ accepted: consuming DefaultsValue?, handle: PendingHandle?, alongside: (PendingHandle?) -> Void)
            -> Bool
        {
            // Moved into the closure through an optional (a closure cannot consume a parameter it captures).
            var moved = Optional(consume accepted)
            suite._withUnsafeGuaranteedRef {
                $0.storage.apply(
                    moved.take()!, forKey: fullKey, validated: true, skipping: skippedObserver, handle: handle,
                    alongside: alongside)
            }
            return true
        }
    }

    /// The write target of the property with key `key`, from the published configuration (no lock taken, no
    /// reference counted: the binding keeps every configuration it published).
    @usableFromInline
    func writeTarget(for key: String) -> WriteTarget {
        let unretained = writeConfiguration.publishedUnretained ?? Unmanaged.passUnretained(currentWriteConfiguration)
        return unretained._withUnsafeGuaranteedRef { configuration in
            let (fullKey, skipped) = _propertyWriteKey(
                key, prefix: configuration.prefix, ownObserver: configuration.observer,
                sharedKeys: configuration.sharedKeys)
            return WriteTarget(
                suite: Unmanaged.passUnretained(configuration.suite), fullKey: fullKey, skippedObserver: skipped)
        }
    }
}
