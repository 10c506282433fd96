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

    /// The variables that place the layers, as getenv reads them (not ProcessInfo's environment: that copies
    /// every variable).
    private static let variableNames =
        ["OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY", "XDG_CONFIG_DIRS"] + SuiteLocation.directoryVariables

    /// The places last worked out, the variables they came from (most opens find the same ones), and a
    /// number told to no other places (see ``currentWithNumber()``).
    private static let last = Locked<(variables: [String?], places: LayerPlaces, number: Int)?>(nil)

    /// The places the environment names now.
    static func current() -> LayerPlaces { currentWithNumber().places }

    /// ``current()``, and a number that identifies these places among all that this process worked out (the
    /// suite registry keys storages by it: cheaper to hash than the places).
    static func currentWithNumber() -> (places: LayerPlaces, number: Int) {
        let variables = variableNames.map { name in getenv(name).map { String(cString: $0) } }
        return last.withLock { last in
            if let last, last.variables == variables { return (last.places, last.number) }
            let found = (places: LayerPlaces(variables), number: (last?.number ?? 0) + 1)
            if let previous = last, previous.places == found.places {
                last = (variables, previous.places, previous.number)
                return (previous.places, previous.number)
            }
            last = (variables, found.places, found.number)
            return found
        }
    }

    /// The places `variables` (the values of ``variableNames``, in order) name.
    private init(_ variables: [String?]) {
        let managed = variables[0].flatMap { $0.isEmpty ? nil : $0 }
        let configDirectories = (variables[1] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var environment: [String: String] = [:]
        for (name, value) in zip(Self.variableNames.dropFirst(2), variables.dropFirst(2)) {
            if let value { environment[name] = value }
        }
        managedDirectory = URL(fileURLWithPath: managed ?? "/etc/observable-defaults/managed", isDirectory: true)
        systemDirectories = (configDirectories.isEmpty ? ["/etc/xdg"] : configDirectories).map {
            URL(fileURLWithPath: $0, isDirectory: true).appendingPathComponent("observable-defaults", isDirectory: true)
        }
        globalDirectory = SuiteLocation.defaultDirectory(environment: environment)
    }

    /// Places given directly (tests).
    init(managedDirectory: URL, systemDirectories: [URL], globalDirectory: URL) {
        self.managedDirectory = managedDirectory
        self.systemDirectories = systemDirectories
        self.globalDirectory = globalDirectory
    }
}
