import Foundation
import ObservableDefaults
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One change that reached the settings object: which property, and when its observer was called.
struct Arrival: Sendable {
    var property: String
    var time: Date
}

/// Collects arrivals from whichever thread changed a property; the demo waits on it with a bounded poll.
final class ArrivalLog: Sendable {
    private let arrivals = Mutex<[Arrival]>([])

    func record(_ arrival: Arrival) { arrivals.withLock { $0.append(arrival) } }

    /// Waits (at most `timeout`) for a change of `property` after `index` arrivals had been seen.
    func wait(for property: String, after index: Int, timeout: Duration = .seconds(5)) -> Arrival? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let found = arrivals.withLock { $0.dropFirst(index).first { $0.property == property } }
            if let found { return found }
            usleep(500)
        }
        return nil
    }

    var count: Int { arrivals.withLock { $0.count } }

    /// How many times each property's observer was called.
    func counts() -> [String: Int] {
        arrivals.withLock { Dictionary($0.map { ($0.property, 1) }, uniquingKeysWith: +) }
    }
}

/// The steps of `defaults-demo`.
struct Demo {
    static let suiteName = "observable-defaults-demo"

    let directory: URL
    let suite: DefaultsSuite
    let settings: DemoSettings
    let log = ArrivalLog()

    var fileURL: URL { suite.fileURL }

    /// Runs the demo; returns whether every change arrived.
    func run() -> Bool {
        for property in DemoSettings.properties {
            Self.track(property.name, read: property.read, settings: settings, log: log)
        }
        say(
            """
            ObservableDefaults demo: an @ObservableDefaults object bound to a file, changed three ways.

            Suite '\(Self.suiteName)' lives in \(fileURL.path)
            (a temporary directory, removed when the demo ends).
            The settings object starts with greeting = \(settings.describe("greeting")), volume = \(settings.volume), theme = \(settings.describe("theme")).

            """)
        var allArrived = true

        // 1. A change made through the object itself.
        say("1. This process sets settings.volume = 8.")
        var start = Date()
        var seen = log.count
        settings.volume = 8
        allArrived =
            report(
                log.wait(for: "volume", after: seen), expected: "8", origin: "this process", since: start,
                what: "the assignment") && allArrived

        // 2. A change made by another process: the `defaults` command-line tool.
        let tool = Self.defaultsTool()
        say("\n2. Another process runs: defaults write \(Self.suiteName) greeting \"hello from another process\"")
        seen = log.count
        start = Date()
        if let failure = runTool(tool, ["write", Self.suiteName, "greeting", "hello from another process"]) {
            say("   could not run the defaults tool (\(tool.path)): \(failure)")
            allArrived = false
        } else {
            let arrival = log.wait(for: "greeting", after: seen)
            allArrived =
                report(
                    arrival, expected: "\"hello from another process\"",
                    origin: "another process, seen through inotify",
                    since: fileModificationDate() ?? start,
                    what: "the file's modification time (a coarse clock: a few ms early at worst)"
                ) && allArrived
            if let arrival {
                say(
                    String(
                        format: "     (%.1f ms after the process was started, most of it process start-up)",
                        arrival.time.timeIntervalSince(start) * 1000))
            }
        }

        // 3. A hand edit, saved the way editors save: write a temporary file, rename it over the original.
        say("\n3. An editor saves the file with theme changed to \"dark\" (write a temporary file, rename it over).")
        seen = log.count
        do {
            let written = try editLikeAnEditor()
            allArrived =
                report(
                    log.wait(for: "theme", after: seen), expected: "\"dark\"",
                    origin: "a hand edit, seen through inotify",
                    since: written, what: "the editor renamed its file into place"
                ) && allArrived
        } catch {
            say("   could not edit the file: \(error)")
            allArrived = false
        }

        let counts = log.counts()
        let summary = DemoSettings.properties.map { "\($0.name) \(counts[$0.name, default: 0])" }.joined(
            separator: ", ")
        say(
            """

            Now: greeting = \(settings.describe("greeting")), volume = \(settings.volume), theme = \(settings.describe("theme")).
            Observer calls per property: \(summary) — each change notified only its own property.

            Try it yourself, in two terminals:
              swift run defaults watch \(Self.suiteName)
              swift run defaults write \(Self.suiteName) greeting hi
            (that suite is a real file in \(DefaultsSuite.defaultDirectory.path);
             remove it with: swift run defaults delete \(Self.suiteName))
            """)
        return allArrived && counts.values.allSatisfy { $0 == 1 }
    }

    /// Observes one property with `withObservationTracking`. Observation calls `onChange` once per
    /// registration, synchronously on the thread that changes the property (the library's watcher thread
    /// for outside changes), before the new value is stored; so the arrival time is exact, and the
    /// property is observed again for its next change once this one is done.
    static func track(
        _ name: String, read: @escaping @Sendable (DemoSettings) -> String, settings: DemoSettings, log: ArrivalLog
    ) {
        withObservationTracking {
            _ = read(settings)
        } onChange: {
            log.record(Arrival(property: name, time: Date()))
            DispatchQueue.global().async { track(name, read: read, settings: settings, log: log) }
        }
    }

    /// Prints how one change arrived; returns whether it did. Observation announces a change before the
    /// value is stored, so this waits (briefly, bounded) for the property to hold the new value.
    private func report(_ arrival: Arrival?, expected: String, origin: String, since start: Date, what: String) -> Bool
    {
        guard let arrival else {
            say("   ✗ the change did not reach the settings object within 5 seconds")
            return false
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        while settings.describe(arrival.property) != expected && ContinuousClock.now < deadline { usleep(200) }
        let milliseconds = max(0, arrival.time.timeIntervalSince(start) * 1000)
        say(
            "   → settings.\(arrival.property) is now \(settings.describe(arrival.property)); from \(origin); "
                + String(format: "arrived %.1f ms after %@", milliseconds, what))
        return settings.describe(arrival.property) == expected
    }

    /// Rewrites the JSON file with `theme` changed, as a text editor would; returns when the rename happened.
    private func editLikeAnEditor() throws -> Date {
        let text = try String(contentsOf: fileURL, encoding: .utf8)
        let edited: String
        if text.contains("\"theme\"") {
            edited = text.replacingOccurrences(of: "\"theme\": \"light\"", with: "\"theme\": \"dark\"")
        } else {
            // Add the key after the opening brace, keeping the rest of the file as it is.
            guard let brace = text.firstIndex(of: "{") else { throw DemoError("the file is not a JSON object") }
            edited = String(text[...brace]) + "\n  \"theme\": \"dark\"," + String(text[text.index(after: brace)...])
        }
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).swp")
        try Data(edited.utf8).write(to: temporary)
        let renamed = Date()
        guard rename(temporary.path, fileURL.path) == 0 else {
            throw DemoError("rename failed: \(String(cString: strerror(errno)))")
        }
        return renamed
    }

    /// When the suite file was last written (its modification time).
    private func fileModificationDate() -> Date? {
        var info = stat()
        guard stat(fileURL.path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// Runs the `defaults` tool on the demo's directory; returns an error description, or nil on success.
    private func runTool(_ tool: URL, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments + ["--directory", directory.path]
        do {
            try process.run()
        } catch {
            return "\(error)"
        }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? nil : "exit status \(process.terminationStatus)"
    }

    /// The `defaults` executable built beside this one.
    static func defaultsTool() -> URL {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return own.deletingLastPathComponent().appendingPathComponent("defaults")
    }
}

/// Prints a line unbuffered, so a reader of a pipe sees it at once.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
