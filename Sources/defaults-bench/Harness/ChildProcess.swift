import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// This executable started again in a helper mode (`defaults-bench --child MODE …`), for the
/// cross-process benchmarks. Its standard output is read line by line.
final class ChildProcess {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer: [UInt8] = []

    /// The path of the running executable, so children are the same build as the parent.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = ["--child"] + arguments
        process.standardOutput = output
        process.standardInput = input
        try process.run()
    }

    /// Sends one line to the child's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the child's standard input (it sees end of file).
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// The next line the child printed, or `nil` when it closed its output or, given a `deadline` on the
    /// monotonic clock, when none was complete by then.
    func readLine(deadline: Int? = nil) -> String? {
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if let deadline {
                let milliseconds = (deadline - monotonicNanoseconds() + 999_999) / 1_000_000
                var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = milliseconds > 0 ? poll(&pollDescriptor, 1, Int32(milliseconds)) : 0
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { return nil }
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                guard !buffer.isEmpty else { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads lines until one starts with `prefix` and returns it (`nil` if the child ended first).
    func waitForLine(startingWith prefix: String) -> String? {
        while let line = readLine() {
            if line.hasPrefix(prefix) { return line }
        }
        return nil
    }

    /// Waits for the child to exit and returns its status.
    @discardableResult
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// The integer argument at `index` of a child mode's arguments, `0` when the mode was given fewer (an
/// optional trailing count); `nil` when it is not an integer.
func integerArgument(_ arguments: [String], at index: Int) -> Int? {
    index < arguments.count ? Int(arguments[index]) : 0
}

/// A line on standard output, unbuffered, so a parent reading the pipe sees it at once.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Ends a helper process with a message on standard error.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("defaults-bench: \(message)\n".utf8))
    exit(2)
}
