import Foundation
import Testing
import TestSupport

/// Runs the built `defaults-bench --quick` as a subprocess: it must exit 0 and print the whole report.
/// No timing assertions — numbers from a test run (debug build, busy machine) mean nothing.
@Suite struct DefaultsBenchSmokeTests {
    static var executableURL: URL { BuiltProduct.url("defaults-bench") }

    /// Runs the bench with `arguments`; returns its exit status, standard output and standard error.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errorData, as: UTF8.self)
        )
    }

    /// Group 8 reads the compile-time script's output; a malformed line is an error naming file and line.
    @Test func compileTimesFileBecomesGroupEightAndItsTarget() throws {
        let file = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "defaults-bench-compile-\(getpid()).tsv")
        defer { try? FileManager.default.removeItem(at: file) }
        try "compile\t50\t2.0\ncompile\t400\t9.5\ncompile\t400\t10.5\n".write(
            to: file, atomically: true, encoding: .utf8)
        let good = try Self.run(["--quick", "--only", "8", "--compile-times", file.path])
        #expect(good.status == 0, "\(good.errors)")
        #expect(good.output.contains("## 8. Compile time"))
        #expect(good.output.contains("| N=50 properties | 2.00 s |"))
        #expect(
            good.output.contains("| N=400 properties | 9.50 s | 10.50 s | 10.50 s | 2 | 4.75× vs N=50 properties |"),
            "\(good.output)")
        #expect(good.output.contains("| A 400-property `@ObservableDefaults` class compiles in < 15 s (debug) | met |"))

        try "compile\t50\t2.0\ncompile\tmany\t3\n".write(to: file, atomically: true, encoding: .utf8)
        let bad = try Self.run(["--quick", "--only", "8", "--compile-times", file.path])
        #expect(bad.status == 2)
        #expect(bad.errors.contains("\(file.path):2: expected `compile<TAB>N<TAB>seconds`"), "\(bad.errors)")
    }

    @Test func quickRunPrintsEveryGroupAndWritesJSON() throws {
        let jsonURL = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "defaults-bench-test-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: jsonURL) }
        let process = Process()
        process.executableURL = Self.executableURL
        process.arguments = ["--quick", "--json", jsonURL.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)

        #expect(process.terminationStatus == 0)
        for title in [
            "## 1. Property read", "## 2. Property write", "## 3. Outside-change fan-out",
            "## 4. Cross-process latency",
            "## 5. Hand-edit latency", "## 6. Scale", "## 7. Concurrent writers", "## 9. Cloud (etcd)", "## 10. Layers",
            "## 11. Fleet (etcd)", "## Machine",
            "## Targets (issue 5)"
        ] {
            #expect(text.contains(title), "missing \(title)")
        }
        #expect(text.contains("| Benchmark | p50 | p90 | p99 | n | Ratio (p50) | Note |"))
        #expect(text.contains("keys lost (must be 0) | 0 |"), "concurrent writers lost keys")
        for row in [
            "floor: raw save", "floor: plain `@Observable` write + one `Mutex`",
            "Issue 12: in-memory part of a property write",
            "Issue 12: write-through `set` on a watched suite",
            "directory watched by a raw inotify reader thread that `stat`s the file at each event on its name",
            "(the least a watcher does to tell its own save from another's), watched ÷ unwatched",
            "a system file saved (the suite's file without the key)",
            "the same, a key the suite's file holds (shadowed: one diff, nobody notified)"
        ] {
            #expect(text.contains(row), "missing \(row)")
        }

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: jsonURL)) as? [String: Any]
        let groups = json?["groups"] as? [[String: Any]]
        #expect(groups?.count == 10)
        #expect((groups ?? []).allSatisfy { !(($0["rows"] as? [Any]) ?? []).isEmpty })
    }
}
