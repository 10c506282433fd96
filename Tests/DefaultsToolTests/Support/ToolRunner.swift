import Foundation
import ObservableDefaults
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A test's temporary directory as a suites directory of the tool.
extension TemporaryDirectory {
    /// The bytes of a file in the directory (empty when it does not exist).
    func bytes(_ name: String) -> Data { (try? Data(contentsOf: file(name))) ?? Data() }

    /// Writes `contents` the way an editor saves: a temporary file renamed over the original.
    func editByRenaming(_ name: String, _ contents: String) throws {
        try HandEdit.renameOver(file(name), contents)
    }

    /// The suite's contents as the library reads the file now.
    func contents(_ name: String) throws -> [String: DefaultsValue] {
        let url = file(name)
        let format = SuiteFormat(fileExtension: url.pathExtension) ?? .json
        return try format.decodeSuite(try Data(contentsOf: url), fileURL: url)
    }
}

/// The result of running a built executable to completion.
struct RunResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var stdoutData: Data

    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs this package's built executables (`defaults`, `defaults-demo`), found beside the test bundle.
enum Built {
    /// The environment for children: the suites directory variable points at `directory` (so nothing
    /// ever lands in the real ~/.config), `extra` is added on top.
    static func environment(directory: TemporaryDirectory?, extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["OBSERVABLE_DEFAULTS_DIRECTORY"] = directory?.path ?? "/nonexistent-defaults-tool-test"
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs `name` with `arguments` to completion; `stdin` is fed to its standard input. The child's working
    /// directory is `workingDirectory`, else the suites directory (so a relative path never reaches the
    /// package), else the temporary directory.
    static func run(
        _ name: String, _ arguments: [String], directory: TemporaryDirectory?, stdin: Data? = nil,
        environment extra: [String: String] = [:], workingDirectory: URL? = nil
    ) throws -> RunResult {
        let scratch = TemporaryDirectory("run")
        defer { withExtendedLifetime(scratch) {} }
        let outURL = scratch.file("out"), errURL = scratch.file("err"), inURL = scratch.file("in")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        try (stdin ?? Data()).write(to: inURL)
        let process = Process()
        process.executableURL = BuiltProduct.url(name)
        process.arguments = arguments
        process.currentDirectoryURL = workingDirectory ?? directory?.url ?? URL(fileURLWithPath: NSTemporaryDirectory())
        process.environment = environment(directory: directory, extra: extra)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        try process.run()
        process.waitUntilExit()
        let out = try Data(contentsOf: outURL)
        return RunResult(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
            stdoutData: out
        )
    }
}

/// Runs the built `defaults` tool on a suites directory.
struct Defaults {
    let directory: TemporaryDirectory

    /// Runs `defaults --directory DIR ARGUMENTS`.
    @discardableResult
    func callAsFunction(_ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        try run(arguments, stdin: stdin)
    }

    func run(_ arguments: [String], stdin: Data? = nil, workingDirectory: URL? = nil) throws -> RunResult {
        try Built.run(
            "defaults", ["--directory", directory.path] + arguments, directory: directory, stdin: stdin,
            workingDirectory: workingDirectory)
    }

    /// Runs a command that must succeed, returning its standard output.
    @discardableResult
    func ok(_ arguments: String..., stdin: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String
    {
        let result = try run(arguments, stdin: stdin)
        #expect(
            result.status == 0, "defaults \(arguments.joined(separator: " ")) failed: \(result)",
            sourceLocation: sourceLocation)
        return result.stdout
    }

    /// The value stored for `key` in the suite file `file` (`app.json`).
    func stored(_ file: String, _ key: String) throws -> DefaultsValue? {
        try directory.contents(file)[key]
    }
}

/// Text collected from a pipe by a reader thread.
final class TextBuffer: Sendable {
    private let text = Mutex<String>("")
    var value: String { text.withLock { $0 } }
    func append(_ more: String) { text.withLock { $0 += more } }
}

/// A child process whose output lines are collected while it runs (for `watch` and the demo).
final class StreamingProcess: Sendable {
    let process: Process
    private let output = TextBuffer()
    private let errors = TextBuffer()

    init(
        _ name: String, _ arguments: [String], directory: TemporaryDirectory?, environment extra: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = BuiltProduct.url(name)
        process.arguments = arguments
        process.currentDirectoryURL = directory?.url ?? URL(fileURLWithPath: NSTemporaryDirectory())
        process.environment = Built.environment(directory: directory, extra: extra)
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        self.process = process
        try process.run()
        Self.collect(outPipe, into: output)
        Self.collect(errPipe, into: errors)
    }

    /// Reads the pipe on its own thread until end of file.
    private static func collect(_ pipe: Pipe, into buffer: TextBuffer) {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        let thread = Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                let text = String(decoding: chunk[0..<count], as: UTF8.self)
                buffer.append(text)
            }
            withExtendedLifetime(pipe) {}
        }
        thread.start()
    }

    var stdout: String { output.value }
    var stderr: String { errors.value }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Polls (at most `timeout`) until `condition` holds for the output so far.
    @discardableResult
    func waitUntil(timeout: Duration = .seconds(10), _ condition: (StreamingProcess) -> Bool) -> Bool {
        eventually(timeout: timeout) { condition(self) }
    }

    /// Waits for a line of standard output containing `text`.
    @discardableResult
    func waitForLine(containing text: String, timeout: Duration = .seconds(10)) -> Bool {
        waitUntil(timeout: timeout) { $0.lines.contains { $0.contains(text) } }
    }

    /// Sends `signal` and waits (bounded) for the process to exit; returns its status, or nil on timeout.
    func stop(signal: Int32 = SIGINT, timeout: Duration = .seconds(10)) -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return waitForExit(timeout: timeout)
    }

    /// Waits (bounded) for the process to exit by itself.
    func waitForExit(timeout: Duration = .seconds(20)) -> Int32? {
        if !eventually(timeout: timeout, { !process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
