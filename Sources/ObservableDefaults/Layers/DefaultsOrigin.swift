import Foundation

/// Where a suite's effective value for a key comes from (see ``DefaultsSuite/origin(forKey:)``): the layer,
/// and the file or variable within it.
public enum DefaultsOrigin: Sendable, Hashable, CustomStringConvertible {
    /// A managed (forced) file.
    case managed(URL)
    /// A `-key value` argument of the process.
    case argument
    /// The environment variable named.
    case environment(String)
    /// The suite's own file (or a change made here and not written yet).
    case file(URL)
    /// A key-per-file directory: the file holding the value.
    case keyPerFile(URL)
    /// A cloud store (``DefaultsLayer/cloud(_:prefix:)``).
    case cloud
    /// A system file under `$XDG_CONFIG_DIRS`.
    case system(URL)
    /// The global domain's file.
    case global(URL)
    /// A registered default.
    case registered

    /// The layer and where in it, e.g. `system /etc/xdg/observable-defaults/app.json`.
    public var description: String {
        switch self {
        case .managed(let url): "managed \(url.path)"
        case .argument: "argument"
        case .environment(let variable): "environment \(variable)"
        case .file(let url): "file \(url.path)"
        case .keyPerFile(let url): "key-per-file \(url.path)"
        case .cloud: "cloud"
        case .system(let url): "system \(url.path)"
        case .global(let url): "global \(url.path)"
        case .registered: "registered"
        }
    }

    /// Whether the value is forced: set by an administrator, and not changeable by the suite.
    var isForced: Bool {
        if case .managed = self { return true }
        return false
    }
}
