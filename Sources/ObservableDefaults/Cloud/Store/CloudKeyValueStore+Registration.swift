import Foundation

extension CloudKeyValueStore {
    /// Adds fallback values for keys that hold none, as ``DefaultsSuite/register(defaults:)-([String:DefaultsValue])``
    /// does: they live in this store's memory only, are never uploaded nor saved, and show through
    /// ``value(forKey:)``, the typed getters, ``values()`` and `@ObservableCloud` properties (before their
    /// declaration defaults). Objects on the store hear a key whose readable value changed.
    public func register(defaults: [String: DefaultsValue]) { core.register(defaults) }

    /// Adds fallback values given as Foundation objects; unsupported objects are skipped and reported on the
    /// error channel.
    public func register(defaults: [String: Any]) {
        register(defaults: DefaultsValue.registrable(defaults) { core.report($0) })
    }

    /// The registered defaults.
    public var registeredDefaults: [String: DefaultsValue] { core.registeredDefaults }
}
