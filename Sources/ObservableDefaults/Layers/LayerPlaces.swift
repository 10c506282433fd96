import Foundation

/// Where the layers kept in files are, read from the environment when a suite opens:
/// `OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY` (else `/etc/observable-defaults/managed`), `XDG_CONFIG_DIRS` (else
/// `/etc/xdg`; relative entries are ignored, as the XDG specification says) and the default suites
/// directory (the global domain's).
struct LayerPlaces: Hashable, Sendable {
    /// The directory of managed files.
    var managedDirectory: URL
    /// The `observable-defaults` directory in each directory of `XDG_CONFIG_DIRS`, in order.
    var systemDirectories: [URL]
    /// The directory of the global domain's file.
    var globalDirectory: URL

    /// The variables `names` that are set, read with getenv.
    private static func variables(_ names: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names { if let value = getenv(name) { values[name] = String(cString: value) } }
        return values
    }

    /// The places the environment names now.
    static func current() -> LayerPlaces {
        // getenv, not ProcessInfo's environment: that copies every variable, at every open.
        let managed = getenv("OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY").map { String(cString: $0) }.flatMap {
            $0.isEmpty ? nil : $0
        }
        let configDirectories = (getenv("XDG_CONFIG_DIRS").map { String(cString: $0) } ?? "").split(separator: ":")
            .map(String.init).filter { $0.hasPrefix("/") }
        return LayerPlaces(
            managedDirectory: URL(fileURLWithPath: managed ?? "/etc/observable-defaults/managed", isDirectory: true),
            systemDirectories: (configDirectories.isEmpty ? ["/etc/xdg"] : configDirectories).map {
                URL(fileURLWithPath: $0, isDirectory: true).appendingPathComponent(
                    "observable-defaults", isDirectory: true)
            },
            globalDirectory: SuiteLocation.defaultDirectory(environment: variables(SuiteLocation.directoryVariables)))
    }
}
