/// The `-key value` pairs of the process's command line: Apple's argument domain.
///
/// Foundation's rule picks the pairs: an argument that starts with `-` followed by one that does not is a
/// key (without its `-`) and its value (trimmed of white space); anything else is passed over. One
/// difference: an argument starting with `--` is never a key. On Linux `--name` is a long option of the
/// program's own parser (`swift test`'s runner gets `--testing-library swift-testing`, a daemon
/// `--config /etc/x`), and Foundation would read it as a setting named `-name`.
struct ArgumentDomain: Sendable {
    /// The pairs, in the order given (a key given twice keeps its last value).
    let values: [ExactKey: DefaultsValue]

    /// The pairs of `arguments` (the program's name first, as in `CommandLine.arguments`).
    init(arguments: [String]) {
        var values: [ExactKey: DefaultsValue] = [:]
        var index = 1
        while index + 1 < arguments.count {
            let current = arguments[index]
            let next = arguments[index + 1]
            if current.hasPrefix("-") && !current.hasPrefix("--") && current.count > 1 && !next.hasPrefix("-") {
                values[ExactKey(String(current.dropFirst()))] = DefaultsValue(
                    settingText: next.trimmingCharacters(in: .whitespacesAndNewlines))
                index += 2
            } else {
                index += 1
            }
        }
        self.values = values
    }

    /// The process's argument domain, read once.
    static let process = ArgumentDomain(arguments: CommandLine.arguments)

    /// The process's argument domain as layer entries, made once.
    static let processEntries = process.entries

    /// The values as layer entries.
    var entries: [ExactKey: LayerEntry] { values.mapValues { LayerEntry(value: $0, origin: .argument) } }
}
