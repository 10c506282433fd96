import Dispatch
import Observation

/// How a change from elsewhere reaches a persisted property, for both macro families.
extension _DefaultsSlot {
    /// Applies what `source` now holds for `fullKey` to the property, only when its stored form changed:
    /// `willSet`, the copy, Observation's `withMutation` for that property only, `didSet`. A value of the
    /// wrong type is reported and the last good value kept.
    ///
    /// The copy changes before Observation hears of it (as in the Apple library, whose getter reads the store
    /// that already changed): a change handler that runs at once on another thread — the task iterating
    /// `Observations` — must read the new value, or it keeps an old one and hears nothing more.
    ///
    /// One thread at a time applies to the slot (`_DefaultsApplyTurn`), so each change is announced once:
    /// a thread that finds another one applying returns at once, and that one reads the source again
    /// before it stops.
    func apply<Host: Observation.Observable & AnyObject>(
        from source: some _DefaultsValueSource, fullKey: String, host: Host, keyPath: KeyPath<Host, Value>,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)?, didSet: ((Host, Value) -> Void)?
    ) {
        applyTurn.take {
            applyOnce(
                from: source, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                willSet: willSet, didSet: didSet)
        }
    }

    /// ``apply(from:fullKey:host:keyPath:registrar:willSet:didSet:)`` on the thread holding the turn.
    private func applyOnce<Host: Observation.Observable & AnyObject>(
        from source: some _DefaultsValueSource, fullKey: String, host: Host, keyPath: KeyPath<Host, Value>,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)?, didSet: ((Host, Value) -> Void)?
    ) {
        var basis = source.currentValue(forKey: fullKey)
        while true {
            guard let resolved = resolve(basis, in: source, fullKey: fullKey, keepingOnMismatch: true) else { return }
            guard let old = snapshot(unlessHolding: resolved) else { return }
            willSet?(host, resolved.value)
            store(resolved)
            registrar.withMutation(of: host, keyPath: keyPath) {}
            didSet?(host, old.value)
            // A write of this object between reading the source and storing the copy (it is not announced back
            // to the object) left the copy older than the source: apply what the source holds now.
            let now = source.currentValue(forKey: fullKey)
            if now == basis { return }
            basis = now
        }
    }
}

extension MainQueue {
    /// Runs `work` on the main actor: at once when already there, else on the main queue.
    static func run(_ work: @escaping @MainActor @Sendable () -> Void) {
        if isCurrent {
            MainActor.assumeIsolated { work() }
        } else {
            DispatchQueue.main.async { work() }
        }
    }
}
