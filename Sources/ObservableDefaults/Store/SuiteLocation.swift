import Foundation

/// Where suite files live, and which names are allowed.
///
/// The suites directory is resolved in this order:
/// 1. a directory (or file URL) passed in code;
/// 2. the `OBSERVABLE_DEFAULTS_DIRECTORY` environment variable;
/// 3. `$XDG_CONFIG_HOME/observable-defaults` when `XDG_CONFIG_HOME` is set to an absolute path;
/// 4. `~/.config/observable-defaults` (home from `$HOME`, else the password database).
enum SuiteLocation {
    /// The environment variable that overrides the default suites directory.
    static let directoryEnvironmentVariable = "OBSERVABLE_DEFAULTS_DIRECTORY"
    /// The environment variable that names the suite behind ``DefaultsSuite/standard``.
    static let standardNameEnvironmentVariable = "OBSERVABLE_DEFAULTS_STANDARD_SUITE"
    /// The folder created inside the XDG configuration directory.
    static let folderName = "observable-defaults"

    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment[directoryEnvironmentVariable], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit, isDirectory: true).standardizedFileURL
        }
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent(folderName, isDirectory: true)
        }
        return homeDirectory(environment: environment)
            .appendingPathComponent(".config", isDirectory: true)
            .appendingPathComponent(folderName, isDirectory: true)
    }

    /// The variables ``defaultDirectory(environment:)`` reads.
    static let directoryVariables = [directoryEnvironmentVariable, "XDG_CONFIG_HOME", "HOME"]

    private static func homeDirectory(environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir {
            return URL(fileURLWithPath: String(cString: dir), isDirectory: true)
        }
        return URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
    }

    /// Throws unless `name` can be a file name inside the suites directory.
    static func validate(name: String) throws(DefaultsError) {
        func reject(_ reason: String) -> DefaultsError {
            DefaultsError(.invalidSuiteName, message: "invalid suite name '\(name)': \(reason)")
        }
        if name.isEmpty { throw reject("the name is empty") }
        if name.contains("/") { throw reject("a suite name cannot contain '/'") }
        if name.utf8.contains(0) { throw reject("a suite name cannot contain a NUL character") }
        if name == "." || name == ".." { throw reject("'.' and '..' are not suite names") }
        if name.utf8.count > maximumNameLength {
            throw reject(
                "the name is \(name.utf8.count) bytes long; at most \(maximumNameLength) fit, so that its file and sidecar files (`.<name>.plist.<pid>.<n>.tmp`) stay within 255 bytes"
            )
        }
    }

    /// The longest file name Linux file systems take.
    static let maximumFileNameLength = 255
    /// The longest suite name: its file (`.plist`, the longer extension) and sidecar files must fit.
    static let maximumNameLength = maximumFileNameLength - SuiteFileIO.longestSidecarOverhead - ".plist".utf8.count

    /// Throws unless a suite file named `fileName` leaves room for its sidecar files.
    static func validate(fileName: String, fileURL: URL) throws(DefaultsError) {
        let limit = maximumFileNameLength - SuiteFileIO.longestSidecarOverhead
        if fileName.utf8.count > limit {
            throw DefaultsError(
                .invalidSuiteName,
                message:
                    "the file name is \(fileName.utf8.count) bytes long; at most \(limit) fit, so that its sidecar files (`.<name>.<pid>.<n>.tmp`) stay within 255 bytes",
                fileURL: fileURL)
        }
    }

    /// The file of suite `name` in `directory`: an existing `<name>.plist` if there is one and no
    /// `<name>.json`, otherwise `<name>.<preferred format>`.
    static func fileURL(name: String, directory: URL, preferredFormat: SuiteFormat?) -> URL {
        if let preferredFormat {
            return directory.appendingPathComponent("\(name).\(preferredFormat.fileExtension)", isDirectory: false)
        }
        let json = directory.appendingPathComponent("\(name).json", isDirectory: false)
        let plist = directory.appendingPathComponent("\(name).plist", isDirectory: false)
        if !FileManager.default.fileExists(atPath: json.path), FileManager.default.fileExists(atPath: plist.path) {
            return plist
        }
        return json
    }

    /// Creates `directory` and its missing parents, private to the user (exactly 0700, whatever the
    /// umask; 0755 for the managed or a system layer's directory and the parents made on the way, which
    /// every user's programs read). Existing directories keep their permissions.
    static func createDirectory(_ directory: URL) throws(DefaultsError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return }
            throw DefaultsError(.fileSystem, message: "the suites directory is not a directory", fileURL: directory)
        }
        let parent = directory.deletingLastPathComponent()
        if parent.path != directory.path { try createDirectory(parent) }
        do {
            let shared = LayerPlaces.leadsToSharedLayerDirectory(directory.path)
            try FileSystem.makeDirectory(directory.path, permissions: shared ? 0o755 : 0o700)
        } catch  where error.errno == .exists && error.call == "mkdir" {
            return
        } catch {
            throw DefaultsError(error, "cannot create the suites directory", fileURL: directory)
        }
    }

    /// The name of ``DefaultsSuite/standard``: `OBSERVABLE_DEFAULTS_STANDARD_SUITE`, else the process name
    /// with characters that cannot be in a suite name replaced by `_`.
    static func standardSuiteName(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let configured = environment[standardNameEnvironmentVariable], (try? validate(name: configured)) != nil {
            return configured
        }
        let processName = ProcessInfo.processInfo.processName.replacingOccurrences(of: "/", with: "_")
        return (try? validate(name: processName)) != nil ? processName : "standard"
    }
}
