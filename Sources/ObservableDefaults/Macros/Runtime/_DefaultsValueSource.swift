import Foundation

/// Where a persisted property's values come from: a suite for `@ObservableDefaults`, a cloud store for
/// `@ObservableCloud`. The slot's resolution rules (stored value, registered default, declaration default;
/// a value of the wrong type reported) are written once over it, so both families store alike.
protocol _DefaultsValueSource {
    /// The value the full key reads before any default (a suite's effective value, through its layers),
    /// or `nil` when absent.
    func currentValue(forKey key: String) -> DefaultsValue?
    /// The registered default for the full key (a cloud store has none).
    func registeredDefault(forKey key: String) -> DefaultsValue?
    /// `stored` in the form the source holds it (a cloud store keeps dates and data as their JSON text), so
    /// comparing a property's stored form with the source's finds no phantom difference.
    func normalized(_ stored: DefaultsValue) -> DefaultsValue
    /// Reports on the source's error channel that `stored`, found under `key`, is not a `Value`.
    func reportMismatch<Value>(_ stored: DefaultsValue, expected: Value.Type, key: String, consequence: String)
}

extension DefaultsSuite: _DefaultsValueSource {
    func currentValue(forKey key: String) -> DefaultsValue? { storage.layeredValue(forKey: key) }

    func registeredDefault(forKey key: String) -> DefaultsValue? { storage.registeredDefaults[ExactKey(key)] }

    func normalized(_ stored: DefaultsValue) -> DefaultsValue { stored }

    func reportMismatch<Value>(_ stored: DefaultsValue, expected: Value.Type, key: String, consequence: String) {
        report(_DefaultsMismatch.error(for: stored, expected: Value.self, key: key, in: self, consequence: consequence))
    }
}
