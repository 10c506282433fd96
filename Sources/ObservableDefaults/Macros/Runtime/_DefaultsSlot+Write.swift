import Observation

/// The property write, for both macro families.
extension _DefaultsSlot {
    /// Writes `newValue` to the property and its key: encode, accept, work out the next copy, `willSet`, the
    /// key written together with the copy, `didSet`. Only the copy's change is announced to Observation and
    /// to `willSet`/`didSet`.
    ///
    /// The copy then holds what a new object would read: assigning `nil` to an Optional removes the key, and
    /// the property reads the fallback (`_DefaultsWriteTarget.fallback(of:)`). The key is written whenever
    /// the target holds something else than the new value, even when the copy already equals it (an outside
    /// change may not have reached the copy yet). A value that cannot be encoded, or that the target refuses,
    /// is reported on its error channel; the property and the target stay unchanged.
    ///
    /// The copy changes under the target's lock together with its memory, so threads writing the property at
    /// once leave the copy equal to memory — also when the copy already held the new value at the comparison
    /// and another thread's change reached it before memory was written (that move back is announced after
    /// the write); the target does not announce the write back to the object's own observer. `didSet` runs only when the write was accepted (a cloud store can refuse it at the last
    /// moment, see `_DefaultsWriteTarget.write(_:alongside:)`).
    ///
    /// Inlinable, so it specializes for the target and the property's type in the generated code
    /// (unspecialized, looking up the generic metadata of the copy's lock cost more than the rest of the write).
    @inlinable
    func write<Target: _DefaultsWriteTarget, Host: Observation.Observable & AnyObject>(
        _ newValue: Value, to target: Target, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)?, didSet: ((Value) -> Void)?
    ) {
        let encoded: DefaultsValue?
        do {
            encoded = try codec.encode(newValue)
        } catch {
            target.reportUnencodable(Value.self, error)
            return
        }
        // Moved along (encoded → accepted → the target's memory); the copy keeps its own stored form.
        guard let accepted = target.accept(consume encoded) else { return }
        let stored = target.storedForm(of: accepted)
        // A removal leaves the copy holding the fallback (or the `nil` itself, see `keepsAssignedNil`); any
        // other write, the new value.
        let removal =
            stored != nil
            ? nil : target.keepsAssignedNil ? State(value: newValue, stored: nil) : target.fallback(of: self)
        // Compared under the copy's lock without copying the copy out; the old value only for `didSet`.
        // With the handle on the key's change in the target's memory that the last write kept (`State.handle`).
        let (copyChanges, old, handle) = state.withLock { current -> (Bool, Value?, PendingHandle?) in
            let changes = if let removal { removal.stored != current.stored } else { stored != current.stored }
            return (changes, changes && didSet != nil ? current.value : nil, current.handle)
        }
        guard copyChanges || target.currentValue() != stored else { return }
        if copyChanges {
            willSet?(newValue)
            registrar.willSet(host, keyPath: keyPath)
        }
        // Set when the copy was equal to the new value at the comparison above but no longer is when memory
        // is written: another thread's change reached memory and this object's copy in between. This write
        // wins in memory, so the copy must follow it, and that move is announced after the write.
        var lateOld: Value?
        let written = target.write(consume accepted, handle: handle) { handle in
            // `store(_:)` done in place: no state is built to be copied in.
            state.withLock { current in
                if !copyChanges {
                    let next = if let removal { removal.stored } else { stored }
                    guard next != current.stored else { return }
                    lateOld = current.value
                }
                if let removal {
                    current.value = removal.value
                    current.stored = removal.stored
                } else {
                    current.value = newValue
                    current.stored = stored
                }
                current.handle = handle
                current.revision &+= 1
            }
        }
        if copyChanges {
            registrar.didSet(host, keyPath: keyPath)
            if written, let didSet, let old { didSet(old) }
        } else if let lateOld {
            willSet?(newValue)
            registrar.withMutation(of: host, keyPath: keyPath) {}
            didSet?(lateOld)
        }
    }
}
