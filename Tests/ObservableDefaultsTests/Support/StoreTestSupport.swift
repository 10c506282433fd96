import Foundation
@testable import ObservableDefaults
import TestSupport

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

