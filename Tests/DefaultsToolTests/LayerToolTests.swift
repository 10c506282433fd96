import Foundation
import Testing
import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The tool and the layers: `read` prints the file, `read --show-origin` every layer with its origin, `-g`
/// is the global domain, and a forced key cannot be written.
@Suite struct LayerToolTests {
    let directory = TemporaryDirectory()
    let layers = TemporaryDirectory("layers")

    var managed: URL { layers.file("managed") }
    var system: URL { layers.file("xdg/observable-defaults") }

    init() throws {
        try FileManager.default.createDirectory(at: managed, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: system, withIntermediateDirectories: true)
    }

    /// The variables that place the layers in ``layers``.
    var layerEnvironment: [String: String] {
        ["OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY": managed.path, "XDG_CONFIG_DIRS": layers.file("xdg").path]
    }

    func run(_ arguments: String...) throws -> RunResult {
        try Built.run("defaults", arguments, directory: directory, environment: layerEnvironment)
    }

    /// The permission bits of the file or directory at `url`.
    func mode(_ url: URL) -> mode_t {
        var info = stat()
        return stat(url.path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    @Test func readShowsTheFileAndShowOriginShowsEveryLayer() throws {
        try Data(#"{"port": 80, "host": "sys"}"#.utf8).write(to: system.appendingPathComponent("app.json"))
        try Data(#"{"mode": "locked"}"#.utf8).write(to: managed.appendingPathComponent("app.json"))
        #expect(try run("write", "-g", "locale", "fr").status == 0)
        #expect(try run("write", "app", "port", "-int", "8080").status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("NSGlobalDomain.json").path))

        #expect(try run("read", "-g", "locale").stdout == "fr\n")
        #expect(try run("read", "app").stdout == "{\n    port = 8080;\n}\n", "read alone prints the file")
        let origins = try run("read", "--show-origin", "app")
        #expect(origins.status == 0, "\(origins)")
        let lines = origins.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("global \(directory.file("NSGlobalDomain.json").path)\tlocale = fr"), "\(lines)")
        #expect(lines.contains("system \(system.appendingPathComponent("app.json").path)\thost = sys"))
        #expect(lines.contains("managed \(managed.appendingPathComponent("app.json").path)\tmode = locked"))
        #expect(lines.contains("file \(directory.file("app.json").path)\tport = 8080"))
        #expect(lines.count == 4)
        #expect(try run("read", "--show-origin", "app", "host").stdout.hasPrefix("system "))

        #expect(try run("delete", "-g", "locale").status == 0)
        #expect(try run("read", "-g", "locale").status == 1)
    }

    @Test func aForcedKeyCannotBeWritten() throws {
        try Data(#"{"mode": "locked"}"#.utf8).write(to: managed.appendingPathComponent("guarded.json"))
        let result = try run("write", "guarded", "mode", "open")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("forced by an administrator"), "\(result)")
        #expect(try run("read", "guarded").status == 1, "the suite has no file: nothing was written")
    }

    @Test func writeSystemAndManagedWriteThoseFilesAndARunningSuiteSeesThemLive() throws {
        // A fresh XDG directory: `write --system` makes its observable-defaults directory.
        try FileManager.default.removeItem(at: system)
        let watch = try StreamingProcess(
            "defaults", ["watch", "app"], directory: directory, environment: layerEnvironment)
        #expect(watch.waitUntil { $0.stderr.contains("Watching ") }, "\(watch.stderr)")

        let written = try run("write", "--system", "app", "port", "-int", "80")
        #expect(written.status == 0, "\(written)")
        let systemFile = system.appendingPathComponent("app.json")
        #expect(mode(systemFile) == 0o644 && mode(system) == 0o755, "every user's programs read the layer")
        #expect(watch.waitForLine(containing: "(system \(systemFile.path)) port = 80"), "\(watch.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("app.json").path), "the user's file stays")

        #expect(try run("write", "--managed", "app", "mode", "locked").status == 0)
        let managedFile = managed.appendingPathComponent("app.json")
        #expect(mode(managedFile) == 0o644)
        #expect(watch.waitForLine(containing: "(managed \(managedFile.path)) mode = locked"), "\(watch.stdout)")
        #expect(try run("read", "--managed", "app", "mode").stdout == "locked\n")
        #expect(try run("path", "--system", "app").stdout == systemFile.path + "\n")
        let refused = try run("write", "app", "mode", "open")
        #expect(refused.status == 1 && refused.stderr.contains("forced by an administrator"), "\(refused)")

        // A hand-written system file is edited where the key is: its comment and layout stay.
        try HandEdit.renameOver(systemFile, "{\n  // shipped by the package\n  \"port\": 80,\n  \"host\": \"a\"\n}\n")
        #expect(watch.waitForLine(containing: "host = a"), "\(watch.stdout)")
        #expect(try run("write", "--system", "app", "host", "b").status == 0)
        let text = try String(contentsOf: systemFile, encoding: .utf8)
        #expect(text == "{\n  // shipped by the package\n  \"port\": 80,\n  \"host\": \"b\"\n}\n", "\(text)")
        #expect(watch.waitForLine(containing: "host = b"), "\(watch.stdout)")

        #expect(try run("delete", "--system", "app", "port").status == 0)
        #expect(watch.waitForLine(containing: "port deleted"), "\(watch.stdout)")
        #expect(try run("delete", "--managed", "app").status == 0)
        #expect(!FileManager.default.fileExists(atPath: managedFile.path))
        #expect(watch.waitForLine(containing: "mode deleted"), "\(watch.stdout)")
        #expect(watch.stop(signal: SIGINT) == 0)
    }

    @Test func layerFlagsOutsideTheirVerbsOrWithAPathAreUsageErrors() throws {
        for arguments in [
            ["write", "--system", "--directory", directory.path, "app", "k", "v"],
            ["write", "--system", "--managed", "app", "k", "v"],
            ["write", "--system", "-g", "k", "v"],
            ["write", "--managed", "./app.json", "k", "v"],
            ["watch", "--system", "app"],
            ["read", "--system", "--show-origin", "app"],
            ["write", "--system=yes", "app", "k", "v"]
        ] {
            let result = try Built.run("defaults", arguments, directory: directory, environment: layerEnvironment)
            #expect(result.status == 2, "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: system.appendingPathComponent("app.json").path))
    }

    @Test func writingALayerWithoutPermissionSaysToRunAsRoot() throws {
        var arguments = ["write", "--system", "app", "port", "-int", "80"]
        var executable = BuiltProduct.url("defaults")
        if getuid() == 0 {
            // Root may write anywhere: the tool runs as nobody.
            arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", executable.path] + arguments
            executable = URL(fileURLWithPath: "/usr/bin/setpriv")
        } else {
            #expect(chmod(system.path, 0o555) == 0)
        }
        defer { chmod(system.path, 0o755) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = Built.environment(directory: directory, extra: layerEnvironment)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(message)")
        #expect(message.contains("cannot write the system layer's directory \(system.path)"), "\(message)")
        #expect(message.contains("run as root"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: system.appendingPathComponent("app.json").path))
    }
}
