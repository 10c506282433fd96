import Foundation
import ObservableDefaults

/// Finds and opens suites for the verbs, with the tool's error messages.
struct SuiteAccess {
    let options: GlobalOptions

    /// The suites directory: `--directory`, else the library's default resolution
    /// (`$OBSERVABLE_DEFAULTS_DIRECTORY`, `$XDG_CONFIG_HOME/observable-defaults`, `~/.config/observable-defaults`).
    var directory: URL { options.directory ?? DefaultsSuite.defaultDirectory }

    /// The file of an existing suite: `<name>.json`, else `<name>.plist`; `nil` when neither exists.
    func existingFile(named name: String) throws(ToolError) -> URL? {
        try validate(name)
        for format in [SuiteFormat.json, .propertyList] {
            let url = directory.appendingPathComponent("\(name).\(format.fileExtension)", isDirectory: false)
            if Self.entryExists(url) { return url }
        }
        return nil
    }

    /// Where the suite's file is, or would be created with the current `--format`.
    func fileURL(named name: String) throws(ToolError) -> URL {
        if let existing = try existingFile(named: name) { return existing }
        let format = options.format ?? .json
        return directory.appendingPathComponent("\(name).\(format.fileExtension)", isDirectory: false)
    }

    func validate(_ name: String) throws(ToolError) {
        do { try DefaultsSuite.validate(name: name) } catch { throw ToolError(error) }
    }

    /// Opens a suite that must exist, and whose file must parse.
    func openExisting(_ name: String) throws(ToolError) -> DefaultsSuite {
        guard let file = try existingFile(named: name) else {
            throw ToolError("Suite '\(name)' does not exist (no \(name).json or \(name).plist in \(directory.path))")
        }
        let suite: DefaultsSuite
        do { suite = try DefaultsSuite(fileURL: file) } catch { throw ToolError(error) }
        if let error = suite.fileError { throw ToolError(error) }
        return suite
    }

    /// Opens a suite for writing, creating its directory (and, on the first write, its file in `--format`).
    /// A file that does not parse is refused: the tool never writes over a broken file.
    func openForWriting(_ name: String) throws(ToolError) -> DefaultsSuite {
        let existing = try existingFile(named: name)
        let suite: DefaultsSuite
        do {
            if let existing {
                suite = try DefaultsSuite(fileURL: existing)
            } else {
                suite = try DefaultsSuite(name: name, directory: directory, format: options.format ?? .json)
            }
        } catch {
            throw ToolError(error)
        }
        if let error = suite.fileError {
            throw ToolError("\(error.description)\nThe file was not changed; fix it first.")
        }
        return suite
    }

    /// Opens a suite to watch it: an existing file as it is (even broken: the watcher reports when it is
    /// fixed), else the place where it will be created.
    func openForWatching(_ name: String) throws(ToolError) -> DefaultsSuite {
        let existing = try existingFile(named: name)
        do {
            if let existing { return try DefaultsSuite(fileURL: existing) }
            return try DefaultsSuite(name: name, directory: directory, format: options.format ?? .json)
        } catch {
            throw ToolError(error)
        }
    }

    /// Writes whatever the suite still holds in memory, turning a failed write into a tool error.
    static func commit(_ suite: DefaultsSuite) throws(ToolError) {
        // A value the format cannot hold was refused on the error channel, not stored.
        if let refused = suite.lastError, refused.kind == .unsupportedValue { throw ToolError(refused) }
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
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
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
