import Foundation
import Observation

/// The generated setter of a persisted property.
extension _DefaultsObjectBinding {
    /// A property write: `willSet`, the copy and the suite updated inside Observation's `withMutation` for
    /// that property only, `didSet`.
    ///
    /// The copy then holds what a new object would read: assigning `nil` to an Optional removes the key, and
    /// the property reads the registered default, else the declaration default. The suite is written
    /// whenever it holds something else than the new value, even when the copy already equals it (an
    /// outside change may not have reached the copy yet); observers are told only when the copy changes.
    /// A value the suite's format cannot store (NaN in a JSON suite, say) is refused as the suite refuses it:
    /// reported on the suite's error channel, the property and the file unchanged.
    ///
    /// The copy changes while the suite's memory changes, under the suite's lock, so threads writing the
    /// property at once leave the copy equal to memory. The change is not announced back to this object's
    /// own suite observer (it would find the copy already equal, at several times the cost of the write),
    /// unless another property of the object shares the key; other observers hear it as usual.
    ///
    /// Inlinable, so it specializes for the property's type in the generated code (unspecialized, looking
    /// up the generic metadata of the copy's lock cost more than the rest of the write).
    @inlinable
    public func set<Host: Observation.Observable & AnyObject, Value>(
        _ newValue: Value, slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)? = nil, didSet: ((Value) -> Void)? = nil
    ) {
        let target = writeTarget(for: slot.key)
        let stored: DefaultsValue?
        do {
            stored = try slot.codec.encode(newValue)
        } catch {
            Self.reportUnencodable(Value.self, error, to: target)
            return
        }
        if let stored, !Self.isWritable(stored, to: target) { return }
        let next = stored == nil
            ? slot.fallback(in: target.suite, fullKey: target.fullKey) : _DefaultsSlot<Value>.State(value: newValue, stored: stored)
        let old = slot.snapshot
        let copyChanges = old.stored != next.stored
        guard copyChanges || target.suite.storedValue(forKey: target.fullKey) != stored else { return }
        if copyChanges {
            willSet?(newValue)
            registrar.willSet(host, keyPath: keyPath)
        }
        Self.write(stored, to: target) {
            if copyChanges { slot.store(next) }
        }
        if copyChanges {
            registrar.didSet(host, keyPath: keyPath)
            didSet?(old.value)
        }
    }

    /// Where a property write goes: the suite, the full key, and the observer the write is not announced
    /// to (the object's own, unless another property shares the key).
    @usableFromInline
    struct WriteTarget {
        @usableFromInline let suite: DefaultsSuite
        @usableFromInline let fullKey: String
        let skippedObserver: UInt64?
    }

    @usableFromInline
    func writeTarget(for key: String) -> WriteTarget {
        let (suite, prefix, observer, sharedKeys) = writeTarget
        let fullKey = prefix + key
        let shared = !sharedKeys.isEmpty && sharedKeys.contains(fullKey)
        return WriteTarget(suite: suite, fullKey: fullKey, skippedObserver: shared ? nil : observer)
    }

    @usableFromInline
    static func reportUnencodable(_ type: Any.Type, _ error: any Error, to target: WriteTarget) {
        target.suite.report(DefaultsError(
            .unsupportedValue, message: "cannot encode a value of type \(type): \(error)", key: target.fullKey))
    }

    @usableFromInline
    static func isWritable(_ stored: DefaultsValue, to target: WriteTarget) -> Bool {
        target.suite.storage.isWritable(stored, forKey: target.fullKey)
    }

    /// Sets the key in the suite's memory (and writes it through unless a batch is open), running
    /// `alongside` under the suite's lock.
    @usableFromInline
    static func write(_ stored: DefaultsValue?, to target: WriteTarget, alongside: () -> Void) {
        target.suite.storage.apply(
            stored, forKey: target.fullKey, validated: true, skipping: target.skippedObserver, alongside: alongside)
    }
}
