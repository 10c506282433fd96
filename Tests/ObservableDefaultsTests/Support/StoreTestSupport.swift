import Foundation
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The built `defaults-test-agent` executable, which lives beside the test bundle.
enum TestAgent {
    static var executableURL: URL { BuiltProduct.url("defaults-test-agent") }

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

/// Counts the opens of one file, by any process, from its creation on (inotify `IN_OPEN` on the file).
///
/// A positive marker for work that leaves nothing else to see: every write attempt of a suite opens its lock
/// file, so the opens tell how many attempts (a failing one too) have begun.
final class FileOpenCounter {
    private let descriptor: Int32
    private var seen = 0

    init(_ url: URL) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        guard inotify_add_watch(descriptor, url.path, UInt32(IN_OPEN)) >= 0 else {
            let error = POSIXError(.init(rawValue: errno)!)
            close(descriptor)
            throw error
        }
    }

    /// The opens so far.
    var opens: Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            // Each event: watch descriptor, mask, cookie, name length (four 32-bit fields), then the name.
            var offset = 0
            while offset + 16 <= count {
                let field = { (index: Int) in
                    buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4 * index, as: UInt32.self) }
                }
                if field(1) & UInt32(IN_OPEN) != 0 { seen += 1 }
                offset += 16 + Int(field(3))
            }
        }
        return seen
    }

    /// Waits until `count` opens have been seen.
    func waitFor(opens count: Int, timeout: Duration = .seconds(20)) -> Bool {
        eventually(timeout: timeout) { opens >= count }
    }

    deinit { close(descriptor) }
}
