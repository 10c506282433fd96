import Foundation
import Testing
import ObservableDefaults
import TestSupport

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

    func run(_ arguments: String...) throws -> RunResult {
        try Built.run(
            "defaults", arguments, directory: directory,
            environment: [
                "OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY": managed.path,
                "XDG_CONFIG_DIRS": layers.file("xdg").path
            ])
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
}
