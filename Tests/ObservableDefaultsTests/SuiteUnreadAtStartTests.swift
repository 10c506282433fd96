import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A suite file that cannot be read at start for lack of file descriptors (`EMFILE`): the suite still
/// opens (ported code force-unwraps `DefaultsSuite(suiteName:)`), an `@ObservableDefaults` object stays on
/// its own suite, the problem is current on the suite's error channel, and the file is read once it can be;
/// a write made meanwhile lands beside the file's other keys.
@Suite struct SuiteUnreadAtStartTests {
    let directory = TemporaryDirectory()

    @Test func aSuiteFileUnreadableForLackOfDescriptorsIsReadOnceItCanBe() throws {
        let suites = directory.file("suites")
        try FileManager.default.createDirectory(at: suites, withIntermediateDirectories: true)
        let fileURL = suites.appendingPathComponent("late.json")
        try Data(#"{"late.level": "debug", "other": 1}"#.utf8).write(to: fileURL)

        let agent = Process()
        agent.executableURL = TestAgent.executableURL
        agent.arguments = ["suite-start-without-descriptors"]
        var environment = ProcessInfo.processInfo.environment
        environment["OBSERVABLE_DEFAULTS_DIRECTORY"] = suites.path
        agent.environment = environment
        let output = Pipe()
        agent.standardOutput = output
        try agent.run()
        defer { if agent.isRunning { agent.terminate() } }
        let lines = LineReader(output.fileHandleForReading)
        _ = eventually(timeout: .seconds(60)) { !agent.isRunning }
        _ = lines.waitFor(timeout: .seconds(5)) { $0.hasPrefix("values ") }  // read to the end
        agent.waitUntilExit()
        #expect(
            agent.terminationStatus == 0,
            "exit 4: the file's value never came, 5: the write did not land: \(lines.lines)")

        #expect(lines.lines.first == "started level=info count=0", "\(lines.lines)")
        let problem = lines.lines.first { $0.hasPrefix("problem ") }
        #expect(
            problem?.contains(fileURL.path) == true && problem?.hasSuffix("errno \(EMFILE)") == true, "\(lines.lines)")
        #expect(lines.lines.contains("values level=debug count=7"), "\(lines.lines)")
        let suite = try DefaultsSuite(fileURL: fileURL)
        #expect(suite.values() == ["late.level": .string("debug"), "late.count": .integer(7), "other": .integer(1)])
        let files = try FileManager.default.contentsOfDirectory(atPath: suites.path).filter { !$0.hasPrefix(".") }
        #expect(files == ["late.json"], "the object wrote elsewhere: \(files)")
    }
}
