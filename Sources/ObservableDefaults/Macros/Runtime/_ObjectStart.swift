/// What start-up needs of one persisted property, in both macro families.
protocol _StartingProperty {
    associatedtype Source: _DefaultsValueSource
    /// The key before the object's prefix.
    var key: String { get }
    /// Reads the source into the property's copy without notifying anyone, unless a change reached the
    /// copy meanwhile (`_DefaultsSlot.load(from:fullKey:)`).
    var load: (Source, String) -> Void { get }
}

extension _DefaultsPropertyBinding: _StartingProperty {}
extension _CloudPropertyBinding: _StartingProperty {}

/// How an object's binding starts, for `@ObservableDefaults` and `@ObservableCloud` alike.
///
/// The order closes the window between loading and observing. The properties are grouped by full key and
/// installed, the observer is registered, and only then is each property loaded. A change that becomes
/// readable before the registration is read by the load; one after it is announced to the object. A change
/// applied while a load is between reading the source and storing its copy wins over the older value the
/// load read: the load stores only when the copy was not set or confirmed meanwhile (the slot's revision).
enum _ObjectStart {
    /// Starts an object on `source`.
    /// - Parameters:
    ///   - install: Records full key → properties in the binding, before anything can be announced.
    ///   - observe: Registers the binding's observer for exactly these full keys; not called without any.
    /// - Returns: what `observe` returned, or `nil` when there is no property.
    @discardableResult
    static func start<Property: _StartingProperty, Observation>(
        _ properties: [Property], prefix: String, source: Property.Source,
        install: ([String: [Property]]) -> Void, observe: (Set<String>) -> Observation
    ) -> Observation? {
        var updaters: [String: [Property]] = [:]
        for property in properties {
            updaters[prefix + property.key, default: []].append(property)
        }
        install(updaters)
        guard !updaters.isEmpty else { return nil }
        let observation = observe(Set(updaters.keys))
        for property in properties { property.load(source, prefix + property.key) }
        return observation
    }
}
