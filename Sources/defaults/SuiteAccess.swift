import Foundation
import ObservableDefaults

/// Finds and opens suites for the verbs, with the tool's error messages.
///
/// A domain argument is a suite name (`NAME.json` or `NAME.plist` in the suites directory) or, when it
/// contains a `/`, the path of a file, as macOS `defaults` accepts (see ``DomainFile``).
struct SuiteAccess {
    let options: GlobalOptions

    /// The layers `read --show-origin` and `watch` read through: the standard ones but the argument domain
    /// (the tool's own flags are not settings).
    static let layers: [DefaultsLayer] = [.managed, .file, .system, .global]
    /// What the other reading verbs show: the file, as macOS `defaults read` does.
    static let fileOnly: [DefaultsLayer] = [.file]
    /// What writes go through: the file, refused for a key an administrator forces.
    static let writing: [DefaultsLayer] = [.managed, .file]

    /// The suites directory: the layer's with `--system` or `--managed`, else `--directory`, else the
    /// library's default resolution (`$OBSERVABLE_DEFAULTS_DIRECTORY`, `$XDG_CONFIG_HOME/observable-defaults`,
    /// `~/.config/observable-defaults`).
    var directory: URL { options.layer?.directory ?? options.directory ?? DefaultsSuite.defaultDirectory }

    /// Where `domain` lives: its existing file, or where a write would create it.
    func resolve(_ domain: String) throws(ToolError) -> DomainFile {
        if let layer = options.layer, domain.contains("/") || domain.hasPrefix("-") {
            throw .usage(
                "--\(layer) names the suite whose \(layer) file is written ('\(domain)' is not a suite name); "
                    + "the file is NAME.json in \(layer.directory.path)")
        }
        return try DomainFile(domain, directory: directory, format: options.format)
    }

    /// Checks the domain argument without touching the file system.
    func validate(_ domain: String) throws(ToolError) {
        _ = try resolve(domain)
    }

    /// Opens a suite that must exist, and whose file must parse, reading the file alone (or `layers`).
    func openExisting(_ domain: String, layers: [DefaultsLayer] = Self.fileOnly) throws(ToolError) -> DefaultsSuite {
        let file = try resolve(domain)
        guard let existing = file.existing else { throw file.missingError }
        let suite: DefaultsSuite
        do { suite = try DefaultsSuite(fileURL: existing, layers: layers) } catch { throw ToolError(error) }
        if let error = suite.fileError { throw ToolError(error) }
        return suite
    }

    /// Opens a suite for writing, creating its directory (and, on the first write, its file in `--format`).
    /// A file that does not parse is refused: the tool never writes over a broken file.
    /// With `--system` or `--managed`, the layer's file is written (mode 0644, its directory made 0755, so
    /// every user's programs read it), read alone: a layer's file is not refused for a key it forces itself.
    func openForWriting(_ domain: String) throws(ToolError) -> DefaultsSuite {
        let file = try resolve(domain)
        try checkLayerWritable()
        let suite = try open(file, layers: options.layer == nil ? Self.writing : Self.fileOnly)
        if let error = suite.fileError {
            throw ToolError("\(error.description)\nThe file was not changed; fix it first.")
        }
        return suite
    }

    /// Opens a suite to watch it: an existing file as it is (even broken: the watcher reports when it is
    /// fixed), else the place where it will be created.
    func openForWatching(_ domain: String) throws(ToolError) -> DefaultsSuite {
        try open(try resolve(domain), layers: Self.layers)
    }

    /// With `--system` or `--managed`, throws unless this process may write the layer's directory (or, while
    /// it is missing, make it in its nearest existing ancestor): those directories belong to the
    /// administrator, and the error says to run as root instead of a bare "permission denied".
    func checkLayerWritable() throws(ToolError) {
        guard let layer = options.layer else { return }
        var existing = directory.path
        while access(existing, F_OK) != 0, existing != "/" {
            existing = URL(fileURLWithPath: existing).deletingLastPathComponent().path
        }
        guard access(existing, W_OK) != 0 else { return }
        let reason = String(cString: strerror(errno))
        let place = existing == directory.path ? "" : " (it is missing, and \(existing) cannot be written)"
        throw ToolError(
            "cannot write the \(layer) layer's directory \(directory.path)\(place): \(reason); "
                + "its files are the administrator's: run as root (sudo defaults ... --\(layer))")
    }

    private func open(_ file: DomainFile, layers: [DefaultsLayer]) throws(ToolError) -> DefaultsSuite {
        do {
            if let existing = file.existing { return try DefaultsSuite(fileURL: existing, layers: layers) }
            if file.isPath { return try DefaultsSuite(fileURL: file.url, layers: layers) }
            return try DefaultsSuite(name: file.name, directory: file.directory, format: file.format, layers: layers)
        } catch {
            throw ToolError(error)
        }
    }

    /// Writes whatever the suite still holds in memory, turning a failed write into a tool error.
    static func commit(_ suite: DefaultsSuite) throws(ToolError) {
        // A value the format cannot hold, or a key an administrator forces, was refused on the error channel,
        // not stored.
        if let refused = suite.lastError, refused.kind == .unsupportedValue || refused.kind == .forcedKey {
            throw ToolError(refused)
        }
        do { try suite.flush() } catch { throw ToolError(error) }
    }

    /// The names of the suites in the directory, sorted: visible `*.json` and `*.plist` regular files or
    /// symlinks with valid names (lock files and temporary files start with a dot and are skipped).
    func suiteNames() throws(ToolError) -> [String] {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) { return [] }
            throw ToolError("cannot list the suites directory \(directory.path): \(error.localizedDescription)")
        }
        var names = Set<String>()
        for entry in entries where !entry.hasPrefix(".") {
            let url = directory.appendingPathComponent(entry, isDirectory: false)
            guard SuiteFormat(fileExtension: url.pathExtension) != nil else { continue }
            let name = url.deletingPathExtension().lastPathComponent
            guard (try? DefaultsSuite.validate(name: name)) != nil else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            names.insert(name)
        }
        return names.sorted()
    }

    /// Whether a directory entry exists at `url`, including a dangling symlink.
    static func entryExists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }
}
