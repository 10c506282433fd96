/// Settings in environment variables: `prefix` + the key with camel-case humps, `.` and `-` turned into
/// `_`, upper-cased (`ACC_` and `logLevel` → `ACC_LOG_LEVEL`, `net.port` → `ACC_NET_PORT`).
///
/// A variable names its key only one way (`ACC_LOG_LEVEL` may be `logLevel`, `log.level` or `log-level`),
/// so a key is looked up by its variable's name, not the other way round.
struct EnvironmentLayer: Sendable {
    let prefix: String

    /// The variable that holds `key`.
    func variableName(forKey key: String) -> String {
        var name = prefix
        var previous: Character?
        for character in key {
            if character == "." || character == "-" {
                name.append("_")
            } else {
                if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { name.append("_") }
                name += character.uppercased()
            }
            previous = character
        }
        return name
    }

    /// The variables of `environment` with the prefix, by name.
    func entries(in environment: [String: String]) -> [String: LayerEntry] {
        var entries: [String: LayerEntry] = [:]
        for (variable, text) in environment where variable.hasPrefix(prefix) && variable.count > prefix.count {
            entries[variable] = LayerEntry(value: DefaultsValue(settingText: text), origin: .environment(variable))
        }
        return entries
    }
}
