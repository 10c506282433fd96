import Foundation
import Testing

/// Runs the built `defaults-bench --quick` as a subprocess: it must exit 0 and print the whole report.
/// No timing assertions — numbers from a test run (debug build, busy machine) mean nothing.
@Suite struct DefaultsBenchSmokeTests {
    static var executableURL: URL {
        let bundleDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [bundleDirectory.appendingPathComponent("defaults-bench")]
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent("defaults-bench"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    @Test func quickRunPrintsEveryGroupAndWritesJSON() throws {
        let jsonURL = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("defaults-bench-test-\(getpid()).json")
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
        for title in ["## 1. Property read", "## 2. Property write", "## 3. Outside-change fan-out", "## 4. Cross-process latency",
                      "## 5. Hand-edit latency", "## 6. Scale", "## 7. Concurrent writers", "## Machine", "## Targets (issue 5)"] {
            #expect(text.contains(title), "missing \(title)")
        }
        #expect(text.contains("| Benchmark | p50 | p90 | p99 | n | Ratio (p50) | Note |"))
        #expect(text.contains("keys lost (must be 0) | 0 |"), "concurrent writers lost keys")

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: jsonURL)) as? [String: Any]
        let groups = json?["groups"] as? [[String: Any]]
        #expect(groups?.count == 7)
        #expect((groups ?? []).allSatisfy { !(($0["rows"] as? [Any]) ?? []).isEmpty })
    }
}
