import Dispatch
import Foundation
import Observation

/// Registration of persisted properties and how an outside change is applied to one.
extension _DefaultsObjectBinding {
    // MARK: - Properties

    /// Describes a persisted property of a non-isolated class.
    public func property<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)? = nil, didSet: ((Host, Value) -> Void)? = nil
    ) -> _DefaultsPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        return _DefaultsPropertyBinding(
            key: slot.key, keyPath: keyPath, slot: slot,
            load: { suite, fullKey in slot.load(from: suite, fullKey: fullKey) },
            follow: { suite, fullKey in slot.follow(suite, fullKey: fullKey) },
            apply: { suite, fullKey in
                guard let host = weakHost.object else { return }
                Self.apply(slot, suite: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                           willSet: willSet, didSet: didSet)
            })
    }

    /// Describes a persisted property of a main-actor class: outside changes are applied on the main actor.
    public func mainActorProperty<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: (@MainActor (Host, Value) -> Void)? = nil, didSet: (@MainActor (Host, Value) -> Void)? = nil
    ) -> _DefaultsPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        let captured = _DefaultsUnchecked(wrapped: (slot, keyPath))
        return _DefaultsPropertyBinding(
            key: slot.key, keyPath: keyPath, slot: slot,
            load: { suite, fullKey in slot.load(from: suite, fullKey: fullKey) },
            follow: { suite, fullKey in slot.follow(suite, fullKey: fullKey) },
            apply: { suite, fullKey in
                let work: @MainActor @Sendable () -> Void = {
                    guard let host = weakHost.object else { return }
                    let (slot, keyPath) = captured.wrapped
                    Self.apply(slot, suite: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                               willSet: willSet.map { body in { body($0, $1) } }, didSet: didSet.map { body in { body($0, $1) } })
                }
                if MainQueue.isCurrent {
                    MainActor.assumeIsolated { work() }
                } else {
                    DispatchQueue.main.async { work() }
                }
            })
    }

    static func apply<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, suite: DefaultsSuite, fullKey: String, host: Host, keyPath: KeyPath<Host, Value>,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)?, didSet: ((Host, Value) -> Void)?
    ) {
        var basis = suite.storedValue(forKey: fullKey)
        while true {
            guard let resolved = slot.resolve(basis, in: suite, fullKey: fullKey, keepingOnMismatch: true) else { return }
            let old = slot.snapshot
            if old.stored == resolved.stored { return }
            willSet?(host, resolved.value)
            // The copy changes before Observation hears of it (as in the Apple library, whose getter reads the
            // store that already changed): a change handler that runs at once on another thread — the task
            // iterating `Observations` — must read the new value, or it keeps an old one and hears nothing more.
            slot.store(resolved)
            registrar.withMutation(of: host, keyPath: keyPath) {}
            didSet?(host, old.value)
            // A write of this object between reading memory and storing the copy (it is not announced back
            // to the object) left the copy older than memory: apply what memory holds now.
            let now = suite.storedValue(forKey: fullKey)
            if now == basis { return }
            basis = now
        }
    }
}
