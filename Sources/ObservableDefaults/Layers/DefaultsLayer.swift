import Foundation

/// One source of a suite's values, in the search list a suite reads through (highest first), like the
/// domains of `UserDefaults`' search list.
///
/// A suite's value for a key is the first layer's that has the key, then its registered default. Only
/// ``file`` is written by the suite; the other layers are read-only to it, and live: a change in any of
/// them reaches observers when it changes the effective value, and never when a higher layer shadows it.
///
/// ```swift
/// let suite = try DefaultsSuite(
///     name: "com.example.daemon", layers: [.managed, .arguments, .environment(prefix: "DAEMON_"), .file, .system])
/// ```
public enum DefaultsLayer: Sendable, Hashable, CustomStringConvertible {
    /// Forced values an administrator sets: `$OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY/NAME.json` (or
    /// `.plist`), else `/etc/observable-defaults/managed/NAME.json`. A write to a forced key is refused and
    /// reported (``DefaultsError/Kind/forcedKey``); ``DefaultsSuite/objectIsForced(forKey:)`` says so.
    case managed
    /// `-key value` pairs of the process's command line (Apple's argument domain).
    case arguments
    /// Environment variables: `prefix` + the key with camel-case humps, `.` and `-` turned into `_`,
    /// upper-cased (`ACC_` and `logLevel` → `ACC_LOG_LEVEL`, `net.port` → `ACC_NET_PORT`).
    case environment(prefix: String)
    /// The suite's own file: the one layer the suite writes. Must appear exactly once.
    case file
    /// A directory whose regular files are keys and whose contents are values (one trailing newline
    /// dropped, typed as a `-key value` argument's; contents that are not UTF-8 are data), as Kubernetes
    /// mounts a ConfigMap or Secret: an update of the volume (its `..data` symlink swapped) is one change.
    case keyPerFile(URL)
    /// A cloud store's values (a fleet-wide value under a machine's own overrides), under the keys that
    /// start with `prefix`, the prefix removed. Read-only to the suite.
    case cloud(CloudKeyValueStore, prefix: String = "")
    /// `NAME.json` (or `.plist`) under `observable-defaults/` in each directory of `$XDG_CONFIG_DIRS`
    /// (default `/etc/xdg`); the first directory that has the key wins.
    case system
    /// The global domain shared by every suite (``DefaultsSuite/global``), in ``DefaultsSuite/defaultDirectory``
    /// whatever directory the suite uses.
    case global

    /// `UserDefaults`' search list on this platform: `[.managed, .arguments, .file, .system, .global]`.
    public static let standard: [DefaultsLayer] = [.managed, .arguments, .file, .system, .global]

    /// The layer as it is written in Swift, e.g. `.environment(prefix: "ACC_")`.
    public var description: String {
        switch self {
        case .managed: ".managed"
        case .arguments: ".arguments"
        case .environment(let prefix): ".environment(prefix: \"\(prefix)\")"
        case .file: ".file"
        case .keyPerFile(let url): ".keyPerFile(\(url.path))"
        case .cloud(let store, let prefix): ".cloud(\(ObjectIdentifier(store)), prefix: \"\(prefix)\")"
        case .system: ".system"
        case .global: ".global"
        }
    }

    /// Equal layers: the same case with equal values (a cloud layer: the same store and prefix).
    public static func == (lhs: DefaultsLayer, rhs: DefaultsLayer) -> Bool {
        switch (lhs, rhs) {
        case (.managed, .managed), (.arguments, .arguments), (.file, .file), (.system, .system), (.global, .global):
            true
        case (.environment(let left), .environment(let right)): left == right
        case (.keyPerFile(let left), .keyPerFile(let right)): left == right
        case (.cloud(let left, let leftPrefix), .cloud(let right, let rightPrefix)):
            left === right && leftPrefix == rightPrefix
        default: false
        }
    }

    /// Hashes the case and its values (a cloud layer: the store's identity and the prefix).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .managed: hasher.combine(0)
        case .arguments: hasher.combine(1)
        case .environment(let prefix):
            hasher.combine(2)
            hasher.combine(prefix)
        case .file: hasher.combine(3)
        case .keyPerFile(let url):
            hasher.combine(4)
            hasher.combine(url)
        case .cloud(let store, let prefix):
            hasher.combine(5)
            hasher.combine(ObjectIdentifier(store))
            hasher.combine(prefix)
        case .system: hasher.combine(6)
        case .global: hasher.combine(7)
        }
    }

    /// Throws unless `layers` holds ``file`` exactly once and no layer twice.
    static func validate(_ layers: [DefaultsLayer], fileURL: URL) throws(DefaultsError) {
        // Most suites open with one of these: no set to build.
        if layers == standard || layers.count == 1 && layers[0] == .file { return }
        let files = layers.filter { $0 == .file }.count
        guard files == 1 else {
            throw DefaultsError(
                .invalidLayers,
                message: "the layers \(list(layers)) hold .file \(files) times; expected it exactly once "
                    + "(the suite's own file, the one layer it writes)", fileURL: fileURL)
        }
        var seen = Set<DefaultsLayer>()
        for layer in layers where !seen.insert(layer).inserted {
            throw DefaultsError(
                .invalidLayers, message: "the layers \(list(layers)) hold \(layer) twice; expected each layer once",
                fileURL: fileURL)
        }
    }

    private static func list(_ layers: [DefaultsLayer]) -> String {
        "[" + layers.map(\.description).joined(separator: ", ") + "]"
    }
}
