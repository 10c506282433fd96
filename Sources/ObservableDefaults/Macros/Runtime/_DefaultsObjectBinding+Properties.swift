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
                slot.apply(
                    from: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
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
                MainQueue.run {
                    guard let host = weakHost.object else { return }
                    let (slot, keyPath) = captured.wrapped
                    slot.apply(
                        from: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                        willSet: willSet.map { body in { body($0, $1) } },
                        didSet: didSet.map { body in { body($0, $1) } })
                }
            })
    }
}
