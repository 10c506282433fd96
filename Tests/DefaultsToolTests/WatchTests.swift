import Foundation
import ObservableDefaults
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `defaults watch` sees writes from another `defaults` process and hand edits, and stops cleanly.
@Suite struct WatchTests {
    /// Starts `defaults watch ARGUMENTS` and waits until it is watching (it says so on stderr).
    private func startWatch(_ directory: TemporaryDirectory, _ arguments: [String]) throws -> StreamingProcess {
        let watch = try StreamingProcess(
            "defaults", ["watch"] + arguments + ["--directory", directory.path], directory: directory)
        let ready = watch.waitUntil { $0.stderr.contains("Watching ") }
        #expect(ready, "watch did not start: \(watch.stderr)")
        return watch
    }

    @Test func jsonLinesForWritesFromAnotherProcessAndHandEdits() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "theme", "light")
        let watch = try startWatch(directory, ["app", "--json"])

        try defaults.ok("write", "app", "theme", "dark")
        #expect(watch.waitForLine(containing: "\"key\":\"theme\""), "no line for the write: \(watch.stdout)")

        try directory.editByRenaming("app.json", "{\n  \"theme\": \"dark\",\n  \"workers\": 8\n}\n")
        #expect(watch.waitForLine(containing: "\"key\":\"workers\""), "no line for the hand edit: \(watch.stdout)")

        try defaults.ok("delete", "app", "workers")
        #expect(watch.waitForLine(containing: "\"removed\":true"))

        #expect(watch.stop(signal: SIGINT) == 0)
        let events = try watch.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        #expect(events.count == 3, "\(watch.stdout)")
        guard events.count == 3 else { return }
        #expect(events[0]["key"] as? String == "theme")
        #expect(events[0]["value"] as? String == "dark")
        #expect(events[0]["origin"] as? String == "outside")
        #expect(events[0]["type"] as? String == "string")
        #expect((events[0]["time"] as? String)?.hasSuffix("Z") == true)
        // Only the key that changed is reported for the hand edit, not `theme` again.
        #expect(events[1]["key"] as? String == "workers")
        #expect(events[1]["value"] as? Int == 8)
        #expect(events[2]["key"] as? String == "workers")
        #expect(events[2]["value"] == nil)
    }

    @Test func humanLinesFilteredByKeysAndPrefix() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        // The suite does not exist yet: watch waits for it.
        let byKey = try startWatch(directory, ["app", "port", "host"])
        let byPrefix = try startWatch(directory, ["app", "--prefix", "net."])

        try defaults.ok("write", "app", "other", "x")
        try defaults.ok("write", "app", "net.mtu", "-int", "1500")
        try defaults.ok("write", "app", "port", "-int", "80")
        try defaults.ok("write", "app", "host", "-array", "a", "b c")
        #expect(byKey.waitForLine(containing: "host = (a, \"b c\")"), "\(byKey.stdout)")
        #expect(byPrefix.waitForLine(containing: "net.mtu = 1500"), "\(byPrefix.stdout)")
        try defaults.ok("write", "app", "net.up", "-bool", "yes")
        #expect(byPrefix.waitForLine(containing: "net.up = 1"), "\(byPrefix.stdout)")

        #expect(byKey.stop(signal: SIGTERM) == 0)
        #expect(byPrefix.stop(signal: SIGINT) == 0)
        #expect(byKey.lines.count == 2, "\(byKey.stdout)")
        #expect(byKey.lines.first?.contains(" outside port = 80") == true, "\(byKey.stdout)")
        #expect(byPrefix.lines.count == 2, "\(byPrefix.stdout)")
        #expect(!byKey.stdout.contains("other") && !byPrefix.stdout.contains("other"))
        // Each human line starts with the time of day: 12:30:00.250
        let time = try #require(byKey.lines.first?.split(separator: " ").first)
        #expect(time.count == 12 && time.filter { $0 == ":" }.count == 2)
    }

    @Test func aBrokenHandEditIsReportedAndWatchingGoesOn() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "-int", "1")
        let watch = try startWatch(directory, ["app"])
        try directory.editByRenaming("app.json", "{\n  \"k\": 2,\n  \"j\": tru\n}\n")
        #expect(watch.waitUntil { $0.stderr.contains("app.json:3:") }, "\(watch.stderr)")
        try directory.editByRenaming("app.json", "{\"k\": 3}")
        #expect(watch.waitForLine(containing: "k = 3"), "\(watch.stdout)")
        #expect(watch.stop() == 0)
    }
}
