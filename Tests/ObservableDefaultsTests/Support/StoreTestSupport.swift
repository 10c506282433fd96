import Foundation
import Testing
@testable import ObservableDefaults

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system temporary directory, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init(_ label: String = #function) {
        let name = "od-test-\(label.filter { $0.isLetter || $0.isNumber })-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name, isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// Records every change an observation delivers, from any thread.
final class ChangeRecorder: Sendable {
    private let received = Locked<[DefaultsChange]>([])

    var changes: [DefaultsChange] { received.withLock { $0 } }

    func record(_ change: DefaultsChange) { received.withLock { $0.append(change) } }

    func clear() { received.withLock { $0.removeAll() } }

    /// Waits until a change containing `key` has arrived.
    func waitFor(key: String, timeout: Duration = .seconds(10)) -> Bool {
        eventually(timeout: timeout) { changes.contains { $0.keys.contains(key) } }
    }

    /// Every change up to and including the first one containing `marker`, with the marker key taken out
    /// (a change left empty is dropped). This is how tests prove that nothing unexpected arrived: one
    /// observer's changes are delivered in order, so once the marker is here every earlier event has been
    /// handled; and a change that was read together with the marker (one file read can take in both)
    /// still counts.
    func changes(before marker: String) -> [DefaultsChange] {
        var result: [DefaultsChange] = []
        for var change in changes {
            let isMarker = change.keys.remove(marker) != nil
            if !change.keys.isEmpty { result.append(change) }
            if isMarker { break }
        }
        return result
    }
}

/// Writes `contents` to `url` the way editors and tools do.
enum HandEdit {
    /// vim, `sed -i`, most tools: write a temporary file and rename it over the original.
    static func renameOver(_ url: URL, _ contents: String) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".edit-\(UInt32.random(in: 0 ... .max))")
        try Data(contents.utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    /// nano, `cp`, shell `>`: truncate the existing file and write into it.
    static func truncateAndWrite(_ url: URL, _ contents: String) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(contents.utf8))
        try handle.close()
    }

    /// Delete the file, then create it anew.
    static func deleteAndRecreate(_ url: URL, _ contents: String) throws {
        try FileManager.default.removeItem(at: url)
        try Data(contents.utf8).write(to: url)
    }
}

/// The built `defaults-test-agent` executable, which lives beside the test bundle.
enum TestAgent {
    static var executableURL: URL {
        let bundleDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [bundleDirectory.appendingPathComponent("defaults-test-agent")]
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent("defaults-test-agent"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// The agent's process with `arguments`, not started yet.
    private static func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        return process
    }

    /// Starts the agent with `arguments`; standard output goes to the returned pipe.
    static func start(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = process(arguments)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Runs the agent to completion and returns its exit status.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Int32 {
        let (process, _) = try start(arguments)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs the agent to completion; returns its exit status and what it wrote to standard error.
    static func runReadingErrors(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let process = process(arguments)
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Starts one agent per argument list, all at once, and returns their exit statuses once all ended.
    static func runTogether(_ argumentLists: [[String]]) throws -> [Int32] {
        let processes = try argumentLists.map { try start($0).0 }
        return processes.map { process in
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}

/// Decodes the suite file at `url` as it is on disk now.
func contentsOnDisk(_ url: URL, format: SuiteFormat = .json) throws -> [String: DefaultsValue] {
    try format.decode(try Data(contentsOf: url), fileURL: url).stringKeyed
}
