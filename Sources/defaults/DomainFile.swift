import Foundation
import ObservableDefaults

/// The file a domain argument names.
///
/// - A suite name `NAME` is `NAME.json`, else `NAME.plist`, in the suites directory; a new suite is created
///   in `--format` (default JSON).
/// - An argument containing `/` is a path (`/etc/app/settings.plist`, `./x.json`), as macOS `defaults`
///   accepts one. A `.json` or `.plist` extension names the file itself; without one, `PATH.json`, else
///   `PATH.plist`, is used, and a new file gets the `--format` extension. The path's directory must exist.
/// - `-g` (or `-globalDomain`) is the global domain, `NSGlobalDomain` in the library's default suites
///   directory whatever `--directory` says (every suite reads it there, see `DefaultsSuite.global`).
/// - Any other argument starting with `-` is an option in the wrong place; macOS's `-currentHost`/`-host`
///   get their own message, since Linux has no per-host settings.
struct DomainFile {
    /// The argument as the user wrote it, for messages.
    let domain: String
    /// The directory holding the file.
    let directory: URL
    /// The suite name (the file name without its extension).
    let name: String
    /// The existing file, if any (a dangling symlink counts: the library reports it).
    let existing: URL?
    /// The format a new file is created in.
    let format: SuiteFormat
    /// Whether the domain was given as a path.
    let isPath: Bool

    /// The file: the existing one, else the one a write creates.
    var url: URL { existing ?? directory.appendingPathComponent("\(name).\(format.fileExtension)", isDirectory: false) }

    init(_ domain: String, directory suitesDirectory: URL, format requested: SuiteFormat?) throws(ToolError) {
        self.domain = domain
        let isGlobal = ["-g", "-globalDomain", "-globaldomain"].contains(domain)
        if !isGlobal, let message = Self.optionMessage(domain) { throw .usage(message) }
        let suitesDirectory = isGlobal ? DefaultsSuite.defaultDirectory : suitesDirectory
        let domain = isGlobal ? DefaultsSuite.globalDomain : domain
        isPath = domain.contains("/")
        var candidates: [URL]
        if isPath {
            let url = URL(fileURLWithPath: domain, isDirectory: false).standardizedFileURL
            directory = url.deletingLastPathComponent()
            if let explicit = SuiteFormat(fileExtension: url.pathExtension) {
                name = url.deletingPathExtension().lastPathComponent
                candidates = [url]
                format = explicit
            } else {
                name = url.lastPathComponent
                candidates = [SuiteFormat.json, .propertyList].map { url.appendingPathExtension($0.fileExtension) }
                format = requested ?? .json
            }
            guard !name.isEmpty, name != ".", name != ".." else {
                throw ToolError(
                    "'\(domain)' is a directory, not a settings file (give a file such as \(domain)/settings.json)")
            }
        } else {
            do { try DefaultsSuite.validate(name: domain) } catch { throw ToolError(error) }
            directory = suitesDirectory
            name = domain
            candidates = [SuiteFormat.json, .propertyList].map {
                suitesDirectory.appendingPathComponent("\(domain).\($0.fileExtension)", isDirectory: false)
            }
            format = requested ?? .json
        }
        existing = candidates.first(where: SuiteAccess.entryExists)
    }

    /// The error for a domain that must exist but does not.
    var missingError: ToolError {
        if isPath {
            return ToolError("Settings file '\(domain)' does not exist (looked for \(url.path))")
        }
        return ToolError("Suite '\(name)' does not exist (no \(name).json or \(name).plist in \(directory.path))")
    }

    /// What to say about a domain argument that starts with `-`; `nil` for any other argument.
    static func optionMessage(_ domain: String) -> String? {
        guard domain.hasPrefix("-"), domain != "-" else { return nil }
        switch domain {
        case "-currentHost", "-host":
            return "'\(domain)' is not supported on Linux: settings are per user, not per host; name a suite instead"
        default:
            return
                "'\(domain)' is not a suite: suite names cannot begin with '-' (options go after the verb's arguments, or use a path such as ./\(domain).json)"
        }
    }
}
