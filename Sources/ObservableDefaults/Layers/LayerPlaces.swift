import Foundation

/// Where the layers kept in files are, read from the environment when a suite opens:
/// `OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY` (else `/etc/observable-defaults/managed`), `XDG_CONFIG_DIRS` (else
/// `/etc/xdg`; relative entries are ignored, as the XDG specification says) and the default suites
/// directory (the global domain's).
struct LayerPlaces: Hashable, Sendable {
    /// The directory of managed files.
    let managedDirectory: URL
    /// The `observable-defaults` directory in each directory of `XDG_CONFIG_DIRS`, in order.
    let systemDirectories: [URL]
    /// The directory of the global domain's file.
    let globalDirectory: URL
    /// ``managedDirectory``, ``systemDirectories`` and ``globalDirectory`` as paths with their numbers, worked
    /// out once: opening a suite works with them (see ``LayerFile``), and a URL's `path` is made anew at
    /// every call.
    let directories: (managed: LayerDirectory, system: [LayerDirectory], global: LayerDirectory)

    /// The variables that place the layers, as getenv reads them (not ProcessInfo's environment: that copies
    /// every variable).
    private static let variableNames =
        ["OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY", "XDG_CONFIG_DIRS"] + SuiteLocation.directoryVariables

    /// ``variableNames`` as C strings, for getenv.
    private static let cVariableNames: [[CChar]] = variableNames.map { Array($0.utf8CString) }

    /// The places last worked out, the variables they came from (NUL-terminated; most opens find the same
    /// ones), and a number told to no other places (see ``currentWithNumber()``).
    private static let last = Locked<(variables: [[CChar]?], places: LayerPlaces, number: Int)?>(nil)

    /// The places the environment names now.
    static func current() -> LayerPlaces { currentWithNumber().places }

    /// ``current()``, and a number that identifies these places among all that this process worked out (the
    /// suite registry keys storages by it: cheaper to hash than the places).
    static func currentWithNumber() -> (places: LayerPlaces, number: Int) {
        last.withLock { last in
            // Compared where the environment keeps them: no string is made for one that did not change.
            if let last, matches(last.variables) { return (last.places, last.number) }
            let values = variableNames.map { name in getenv(name).map { String(cString: $0) } }
            let variables = values.map { $0.map { Array($0.utf8CString) } }
            let found = (places: LayerPlaces(values), number: (last?.number ?? 0) + 1)
            if let previous = last, previous.places == found.places {
                last = (variables, previous.places, previous.number)
                return (previous.places, previous.number)
            }
            last = (variables, found.places, found.number)
            return found
        }
    }

    /// Whether the environment holds `variables` (the values of ``variableNames``, in order, NUL-terminated)
    /// now. Compared as C strings where getenv finds them: no Swift string is made or retained.
    private static func matches(_ variables: [[CChar]?]) -> Bool {
        for index in variables.indices {
            switch (getenv(cVariableNames[index]), variables[index]) {
            case (nil, nil): continue
            case (let current?, let value?): if strcmp(current, value) != 0 { return false }
            default: return false
            }
        }
        return true
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
        directories = Self.directories(managedDirectory, systemDirectories, globalDirectory)
    }

    private static func directories(
        _ managed: URL, _ system: [URL], _ global: URL
    ) -> (LayerDirectory, [LayerDirectory], LayerDirectory) {
        (LayerDirectory(managed.path), system.map { LayerDirectory($0.path) }, LayerDirectory(global.path))
    }

    /// Equal places: the same directories.
    static func == (lhs: LayerPlaces, rhs: LayerPlaces) -> Bool {
        lhs.managedDirectory == rhs.managedDirectory && lhs.systemDirectories == rhs.systemDirectories
            && lhs.globalDirectory == rhs.globalDirectory
    }

    /// Hashes the directories.
    func hash(into hasher: inout Hasher) {
        hasher.combine(managedDirectory)
        hasher.combine(systemDirectories)
        hasher.combine(globalDirectory)
    }

    /// Whether `path` (a directory, without a trailing `/`) is the managed directory or a system directory
    /// of the places the environment names now: a layer every user's programs read, whose new files are
    /// made readable by all (see ``DefaultsSuite/systemDirectories``). The user's own suites directory never
    /// is, even when `XDG_CONFIG_DIRS` names it.
    static func isSharedLayerDirectory(_ path: String) -> Bool {
        current().sharedDirectories(from: path).contains { $0 == path }
    }

    /// Whether `path` is a shared layer directory (``isSharedLayerDirectory(_:)``) or one of their
    /// ancestors: a directory made on the way to one must let every user through.
    static func leadsToSharedLayerDirectory(_ path: String) -> Bool {
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return current().sharedDirectories(from: path).contains { $0 == path || $0.hasPrefix(prefix) }
    }

    /// The paths (without a trailing `/`) of the managed and system directories, unless `path` is the
    /// user's suites directory.
    private func sharedDirectories(from path: String) -> [String] {
        func trimmed(_ url: URL) -> String {
            let path = url.path
            return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        }
        if trimmed(globalDirectory) == path { return [] }
        return ([managedDirectory] + systemDirectories).map(trimmed)
    }

    /// Places given directly (tests).
    init(managedDirectory: URL, systemDirectories: [URL], globalDirectory: URL) {
        self.managedDirectory = managedDirectory
        self.systemDirectories = systemDirectories
        self.globalDirectory = globalDirectory
        directories = Self.directories(managedDirectory, systemDirectories, globalDirectory)
    }
}
