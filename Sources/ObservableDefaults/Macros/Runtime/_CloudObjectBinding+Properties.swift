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
            key: slot.key, keyPath: keyPath, slot: slot,
            load: { store, fullKey in slot.load(from: store, fullKey: fullKey) },
            apply: { store, fullKey in
                guard let host = weakHost.object else { return }
                slot.apply(
                    from: store, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
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
            key: slot.key, keyPath: keyPath, slot: slot,
            load: { store, fullKey in slot.load(from: store, fullKey: fullKey) },
            apply: { store, fullKey in
                MainQueue.run {
                    guard let host = weakHost.object else { return }
                    let (slot, keyPath) = captured.wrapped
                    slot.apply(
                        from: store, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                        willSet: willSet.map { body in { body($0, $1) } },
                        didSet: didSet.map { body in { body($0, $1) } })
                }
            })
    }
}
