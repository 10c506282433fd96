import Foundation
import ObservableDefaults
import Testing
import TestSupport

// The settings class of the README's five-minute guide, verbatim, so the README cannot drift from what
// compiles.
@ObservableDefaults(suiteName: "com.example.daemon")
final class Settings: Sendable {
    var logLevel = "info"  // stored under the key "logLevel"
    var workers: Int = 4
    var endpoint: URL? = nil  // nil removes the key
    @DefaultsKey(userDefaultsKey: "net.port") var port = 8080
    @ObservableOnly var lastReload = Date()  // observable, not stored
}

/// The README's guide, run: the macro class, the `defaults` tool changing it from outside, and the JSON file.
@Suite struct ReadmeExampleTests {
    @Test func settingsClassFromTheGuide() async throws {
        let directory = TemporaryDirectory()
        let suite = try DefaultsSuite(name: "com.example.daemon", directory: directory.url)
        let settings = Settings(userDefaults: suite)
        settings.workers = 8
        settings.endpoint = URL(string: "https://example.com/api")
        #expect(
            try directory.contents("com.example.daemon.json") == [
                "workers": .integer(8), "endpoint": .string("https://example.com/api")
            ])
        settings.endpoint = nil
        #expect(try directory.contents("com.example.daemon.json") == ["workers": .integer(8)])

        let changes = Observations { settings.logLevel }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == "info")
        // Another process changes it: the `defaults` tool.
        try Defaults(directory: directory).ok("write", "com.example.daemon", "logLevel", "debug")
        #expect(await iterator.next() == "debug")
        try Defaults(directory: directory).ok("write", "com.example.daemon", "net.port", "-int", "9090")
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while settings.port != 9090 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(settings.port == 9090)
        #expect(
            try Defaults(directory: directory).ok("read-type", "com.example.daemon", "workers") == "Type is integer\n")
    }
}
