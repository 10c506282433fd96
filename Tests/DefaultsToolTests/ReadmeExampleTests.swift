import Foundation
import ObservableDefaults
import Testing
import TestSupport

// The declarations of the README's daemon example (its main.swift), verbatim but for the layout .ci/format
// gives end-of-line comments, so the README cannot drift from what compiles and runs.
enum LogLevel: String, Codable, Sendable {
    case debug, info, warning, error
}

struct Upstream: Codable, Equatable, Sendable {
    var host: String
    var port: Int
}

@ObservableDefaults(suiteName: "com.example.daemon")
final class DaemonSettings: Sendable {
    var greeting = "hello"  // a string in the file
    var workers = 4
    var logLevel: LogLevel = .info  // its raw value: "info"
    var upstream = Upstream(host: "localhost", port: 8080)  // a JSON object
}

/// The README's daemon, run: its settings object observed as the README's loop observes it, the `defaults`
/// commands the README shows changing it from another process, and the file the README shows afterwards.
@Suite struct ReadmeExampleTests {
    /// The ```json block of the README: the daemon's file after the README's `defaults write` commands.
    static func readmeJSON() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```json\n"))
        let end = try #require(readme.range(of: "\n```\n", range: start.upperBound..<readme.endIndex))
        return String(readme[start.upperBound..<end.lowerBound]) + "\n"
    }

    @Test func daemonFollowsTheDefaultsTool() async throws {
        let directory = TemporaryDirectory()
        let suite = try DefaultsSuite(name: "com.example.daemon", directory: directory.url)
        let settings = DaemonSettings(userDefaults: suite)
        #expect(suite.fileURL == directory.url.appendingPathComponent("com.example.daemon.json"))

        let changes = Observations { (settings.greeting, settings.workers, settings.logLevel, settings.upstream) }
        var iterator = changes.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.0 == "hello" && first.1 == 4 && first.2 == .info)
        #expect(first.3 == Upstream(host: "localhost", port: 8080))

        // Another process changes it: the README's `defaults write` commands, one at a time.
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "com.example.daemon", "workers", "-int", "8")
        #expect(try #require(await iterator.next()).1 == 8)
        try defaults.ok("write", "com.example.daemon", "logLevel", "debug")
        #expect(try #require(await iterator.next()).2 == .debug)
        try defaults.ok(
            "write", "com.example.daemon", "upstream", "-dict", "host", "db.internal", "port", "-int", "5432")
        #expect(try #require(await iterator.next()).3 == Upstream(host: "db.internal", port: 5432))

        #expect(settings.greeting == "hello")
        #expect(
            try directory.contents("com.example.daemon.json") == [
                "workers": .integer(8), "logLevel": .string("debug"),
                "upstream": .dictionary(["host": .string("db.internal"), "port": .integer(5432)])
            ])
        #expect(
            try String(contentsOf: suite.fileURL, encoding: .utf8) == Self.readmeJSON(),
            "the README shows the daemon's file as it is")
        #expect(try defaults.ok("read-type", "com.example.daemon", "workers") == "Type is integer\n")

        // The daemon's own assignment reaches the file before it returns.
        settings.greeting = "hi"
        #expect(try directory.contents("com.example.daemon.json")["greeting"] == .string("hi"))
    }
}
