import Dispatch
import Foundation
import Observation

/// Registration of an `@ObservableCloud` object's persisted properties and how a change from elsewhere is
/// applied to one.
extension _CloudObjectBinding {
    /// Describes a persisted property of a non-isolated class.
    public func property<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)? = nil, didSet: ((Host, Value) -> Void)? = nil
    ) -> _CloudPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        return _CloudPropertyBinding(
            key: slot.key, keyPath: keyPath,
            load: { store, fullKey in slot.load(from: store, fullKey: fullKey) },
            apply: { store, fullKey in
                guard let host = weakHost.object else { return }
                Self.apply(slot, store: store, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                           willSet: willSet, didSet: didSet)
            })
    }

    /// Describes a persisted property of a main-actor class: changes from elsewhere are applied on the main actor.
    public func mainActorProperty<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: (@MainActor (Host, Value) -> Void)? = nil, didSet: (@MainActor (Host, Value) -> Void)? = nil
    ) -> _CloudPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        let captured = _DefaultsUnchecked(wrapped: (slot, keyPath))
        return _CloudPropertyBinding(
            key: slot.key, keyPath: keyPath,
            load: { store, fullKey in slot.load(from: store, fullKey: fullKey) },
            apply: { store, fullKey in
                let work: @MainActor @Sendable () -> Void = {
                    guard let host = weakHost.object else { return }
                    let (slot, keyPath) = captured.wrapped
                    Self.apply(slot, store: store, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                               willSet: willSet.map { body in { body($0, $1) } }, didSet: didSet.map { body in { body($0, $1) } })
                }
                if MainQueue.isCurrent {
                    MainActor.assumeIsolated { work() }
                } else {
                    DispatchQueue.main.async { work() }
                }
            })
    }

    /// Applies what the store now holds for `fullKey` to the property, only when its stored form changed:
    /// `willSet`, the copy, Observation's `withMutation` for that property only, `didSet`. A value of the
    /// wrong type is reported and the last good value kept.
    static func apply<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, store: CloudKeyValueStore, fullKey: String, host: Host, keyPath: KeyPath<Host, Value>,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)?, didSet: ((Host, Value) -> Void)?
    ) {
        var basis = store.value(forKey: fullKey)
        while true {
            guard let resolved = slot.resolve(basis, in: store, fullKey: fullKey, keepingOnMismatch: true) else { return }
            let old = slot.snapshot
            if old.stored == resolved.stored { return }
            willSet?(host, resolved.value)
            // The copy changes before Observation hears of it, as in `_DefaultsObjectBinding.apply`.
            slot.store(resolved)
            registrar.withMutation(of: host, keyPath: keyPath) {}
            didSet?(host, old.value)
            // A write of this object between reading memory and storing the copy (not announced back to the
            // object) left the copy older than memory: apply what memory holds now.
            let now = store.value(forKey: fullKey)
            if now == basis { return }
            basis = now
        }
    }
}
