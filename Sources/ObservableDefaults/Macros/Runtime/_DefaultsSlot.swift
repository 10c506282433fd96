import Foundation

/// The typed in-memory copy of one persisted property: its current value with its stored form, the
/// declaration-time default (captured once, when the object is created) and the storage rule.
///
/// Reads take a lock and copy the value; they never touch the suite or decode.
/// Implementation detail of the macros (the generated code uses it); not API.
public final class _DefaultsSlot<Value> {
    /// The key before the object's prefix.
    public let key: String
    /// The declaration-time default.
    let declarationDefault: Value
    @usableFromInline let codec: _DefaultsCodec<Value>
    @usableFromInline let state: _DefaultsLocked<State>
    /// One applier of outside changes at a time (see `_DefaultsApplyTurn`).
    let applyTurn = _DefaultsApplyTurn()

    @usableFromInline
    struct State {
        @usableFromInline var value: Value
        /// The stored form of `value` (`nil`: no key / not encodable).
        @usableFromInline var stored: DefaultsValue?
        /// Counts the times the copy was set or confirmed (`store(_:)`, `snapshot(unlessHolding:)`): a
        /// start-up load stores its value only when the count has not moved since the load began reading.
        /// Kept by the slot: a new state's own count is ignored.
        @usableFromInline var revision: UInt64 = 0
        /// Where the last property write left the key's change in the suite's memory, so that the next write
        /// can update it without looking the key up (`nil`: not known; only a hint, checked before use).
        @usableFromInline var handle: PendingHandle?

        @usableFromInline init(value: Value, stored: DefaultsValue?) {
            self.value = value
            self.stored = stored
        }
    }

    init(key: String, default value: Value, codec: _DefaultsCodec<Value>) {
        self.key = key
        self.declarationDefault = value
        self.codec = codec
        self.state = _DefaultsLocked(State(value: value, stored: try? codec.encode(value)))
    }

    /// The current value (inlinable: the read specializes in the generated code and never decodes).
    @inlinable
    public var value: Value { state.withLock { $0.value } }

    func store(_ value: Value, stored: DefaultsValue?) {
        store(State(value: value, stored: stored))
    }

    /// Sets the copy to what the source holds for `fullKey`, without notifying anyone (start-up), unless a
    /// change reached the copy meanwhile.
    ///
    /// The object's observer is registered before the load (see `_ObjectStart`), so a change made after the
    /// load read the source is applied to the copy; storing the older value read here after it would keep
    /// the copy stale until the key changes again. So the value is stored only when the copy's revision has
    /// not moved since before the read: a change applied meanwhile (or found equal to the copy) wins.
    func load(from source: some _DefaultsValueSource, fullKey: String) {
        let revision = state.withLock { $0.revision }
        let loaded = resolve(in: source, fullKey: fullKey, keepingOnMismatch: false)!
        _StartWindow.pause(fullKey: fullKey)
        state.withLock { current in
            guard current.revision == revision else { return }
            current = loaded
            current.revision = revision &+ 1
        }
    }

    /// Replaces the copy (its value and stored form) and counts a revision.
    @inlinable
    func store(_ next: State) {
        state.withLock { current in
            let revision = current.revision
            current = next
            current.revision = revision &+ 1
        }
    }

    /// The copy, unless its stored form already is `next`'s: then the copy is confirmed as current (a
    /// revision is counted, so a start-up load under way keeps it) and the result is `nil`.
    func snapshot(unlessHolding next: State) -> State? {
        state.withLock { current in
            guard current.stored == next.stored else { return current }
            current.revision &+= 1
            return nil
        }
    }

    /// Takes what the source now holds for `fullKey`, without notifying anyone; a value of the wrong type
    /// is reported and the copy kept.
    /// Like an applied change, it repeats when memory changed meanwhile (see `_DefaultsSlot.apply(from:fullKey:host:keyPath:registrar:willSet:didSet:)`).
    func follow(_ source: some _DefaultsValueSource, fullKey: String) {
        var basis = source.currentValue(forKey: fullKey)
        while let resolved = resolve(basis, in: source, fullKey: fullKey, keepingOnMismatch: true) {
            store(resolved)
            let now = source.currentValue(forKey: fullKey)
            if now == basis { return }
            basis = now
        }
    }

    /// The value the source holds for `fullKey`: the stored value, else the registered default, else the
    /// declaration default — what a newly created object reads.
    ///
    /// A stored value of the wrong type is reported on the source's error channel (a suite adds the file
    /// position of the value when it can be found). Then a running object keeps its last good value
    /// (`keepingOnMismatch`, the result is `nil`), and a new object uses the registered default, then the
    /// declaration default.
    func resolve(in source: some _DefaultsValueSource, fullKey: String, keepingOnMismatch: Bool) -> State? {
        resolve(
            source.currentValue(forKey: fullKey), in: source, fullKey: fullKey, keepingOnMismatch: keepingOnMismatch)
    }

    /// ``resolve(in:fullKey:keepingOnMismatch:)`` for the value `stored` the source held for `fullKey`.
    func resolve(
        _ stored: DefaultsValue?, in source: some _DefaultsValueSource, fullKey: String, keepingOnMismatch: Bool
    ) -> State? {
        guard let stored else { return fallback(from: source, fullKey: fullKey) }
        if let value = codec.decode(stored) { return State(value: value, stored: stored) }
        source.reportMismatch(
            stored, expected: Value.self, key: fullKey,
            consequence: keepingOnMismatch ? "keeping the current value" : "using the default")
        return keepingOnMismatch ? nil : fallback(from: source, fullKey: fullKey)
    }

    /// What the property reads when the key is not stored: the registered default (when it fits), else the
    /// declaration default.
    @usableFromInline
    func fallback(in suite: DefaultsSuite, fullKey: String) -> State {
        fallback(from: suite, fullKey: fullKey)
    }

    /// ``fallback(in:fullKey:)`` for any source (a cloud store has no registered defaults).
    func fallback(from source: some _DefaultsValueSource, fullKey: String) -> State {
        if let registered = source.registeredDefault(forKey: fullKey), let value = codec.decode(registered) {
            return State(value: value, stored: registered)
        }
        return State(value: declarationDefault, stored: (try? codec.encode(declarationDefault)).map(source.normalized))
    }
}

extension _DefaultsSlot: @unchecked Sendable where Value: Sendable {}
