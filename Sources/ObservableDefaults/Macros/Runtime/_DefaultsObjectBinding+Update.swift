import Foundation
import Observation

/// The generated `update(_:_:)`: an atomic read-modify-write of one persisted property, across processes.
extension _DefaultsObjectBinding {
    /// Replaces the value of the persisted property at `keyPath` with what `transform` makes of it, in one
    /// ``DefaultsSuite/update(forKey:_:)`` of its key: `transform` gets the value the file holds (read under
    /// the cross-process lock), else the registered default, else the declaration default, and returns the
    /// new one (`nil` on an Optional removes the key).
    ///
    /// Afterwards the property is what the suite holds, told as an own write: `willSet`, Observation for that
    /// key path, `didSet` — once, and only when the value changed, also with `ignoreExternalChanges`. The
    /// store's announcement of the key (and any other change of it meanwhile) is held back until then, so
    /// observers never hear it twice.
    /// - Returns: the value `transform` returned.
    /// - Throws: the error of `transform`; a ``DefaultsError`` when the key holds a value of another type,
    ///   the new value cannot be stored, or the write fails (see ``DefaultsSuite/update(forKey:_:)``); then
    ///   the key is unchanged. A ``DefaultsError`` when `keyPath` is not a persisted property.
    public func update<Host: AnyObject, Value>(
        _ keyPath: KeyPath<Host, Value>, of host: Host, _ transform: (Value) throws -> Value
    ) throws -> Value {
        let (suite, prefix) = target
        let property = state.withLock { state in
            state.updaters.values.lazy.flatMap { $0 }.first { $0.keyPath == keyPath }
        }
        guard let property,
            let slot = property.slot as? _DefaultsSlot<Value>
        else {
            throw DefaultsError(
                .unsupportedValue,
                message: "the key path \(keyPath) is not a persisted property of \(Host.self) (it is @ObservableOnly, "
                    + "@Ignore or computed, or observerStarter() has not run)", fileURL: suite.fileURL)
        }
        let fullKey = prefix + property.key
        // Read before the suite's locks are taken (the closure below runs holding them).
        let fallback = slot.fallback(in: suite, fullKey: fullKey).value
        var outcome: Result<Value, any Error>?
        beginUpdate(of: fullKey)
        defer { endUpdate(of: fullKey, property: property, suite: suite) }
        try suite.update(forKey: fullKey) { current in
            // Runs again when the write starts over: only the last run counts.
            do {
                let value: Value
                if let current {
                    guard let decoded = slot.codec.decode(current) else {
                        throw _DefaultsMismatch.error(
                            for: current, expected: Value.self, key: fullKey, in: suite,
                            consequence: "the update was not made")
                    }
                    value = decoded
                } else {
                    value = fallback
                }
                let newValue = try transform(value)
                let stored = try slot.codec.encode(newValue)
                if let stored { try suite.format.validate(stored, forKey: fullKey, fileURL: suite.fileURL) }
                outcome = .success(newValue)
                return stored
            } catch {
                outcome = .failure(error)
                return current
            }
        }
        switch outcome {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil: preconditionFailure("DefaultsSuite.update(forKey:_:) returned without running its transform")
        }
    }

    private func beginUpdate(of fullKey: String) {
        state.withLock { $0.updating[fullKey, default: 0] += 1 }
    }

    /// Applies what the suite now holds for `fullKey` when it changed during the update: to the updated
    /// property as an own write (observers are told even when outside changes are ignored), to another
    /// property under the same key as an outside change.
    ///
    /// One thread at a time applies a key (resolving and storing are two steps: two threads interleaving them
    /// could leave an older value in the copy); a change arriving meanwhile makes that thread apply again.
    private func endUpdate(of fullKey: String, property: _DefaultsPropertyBinding, suite: DefaultsSuite) {
        let (mustApply, others) = state.withLock { state in
            if state.updating[fullKey] == 1 { state.updating[fullKey] = nil } else { state.updating[fullKey]! -= 1 }
            let others = (state.updaters[fullKey] ?? []).filter { $0.keyPath != property.keyPath }
            guard state.changedWhileUpdating.remove(fullKey) != nil else { return (false, others) }
            if state.applying.contains(fullKey) {
                state.applyAgain.insert(fullKey)
                return (false, others)
            }
            state.applying.insert(fullKey)
            return (true, others)
        }
        guard mustApply else { return }
        repeat {
            property.apply(suite, fullKey)
            for other in others {
                if other.silent { other.follow(suite, fullKey) } else { other.apply(suite, fullKey) }
            }
        } while state.withLock { state in
            if state.applyAgain.remove(fullKey) != nil { return true }
            state.applying.remove(fullKey)
            return false
        }
    }
}
