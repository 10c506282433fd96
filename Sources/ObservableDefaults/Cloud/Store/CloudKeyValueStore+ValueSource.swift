import Foundation

/// What `@ObservableCloud` properties read from their store: its values, else its registered defaults, else
/// the declaration default (as for a suite), dates and data as their JSON text, and type mismatches reported
/// on the store's error channel.
extension CloudKeyValueStore: _DefaultsValueSource {
    func currentValue(forKey key: String) -> DefaultsValue? { storedValue(forKey: key) }

    func registeredDefault(forKey key: String) -> DefaultsValue? { core.registeredDefault(forKey: key) }

    func normalized(_ stored: DefaultsValue) -> DefaultsValue { JSONRepresentation.normalize(stored) }

    func reportMismatch<Value>(_ stored: DefaultsValue, expected: Value.Type, key: String, consequence: String) {
        core.report(
            DefaultsError(
                .wrongType, message: "\(_DefaultsMismatch.problem(stored, expected: Value.self)); \(consequence)",
                key: key))
    }
}
