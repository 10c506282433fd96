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
        var converted: [String: DefaultsValue] = [:]
        for (key, object) in defaults {
            if let value = DefaultsValue(any: object) {
                converted[key] = value
            } else {
                core.report(DefaultsError(.unsupportedValue, message: "cannot register a default of type \(type(of: object))", key: key))
            }
        }
        register(defaults: converted)
    }

    /// The registered defaults.
    public var registeredDefaults: [String: DefaultsValue] { core.registeredDefaults }
}
