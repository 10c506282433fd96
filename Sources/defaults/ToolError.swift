import Foundation
import ObservableDefaults

/// A failure the tool reports on stderr before exiting with a non-zero status.
struct ToolError: Error, CustomStringConvertible {
    /// The process exit status: 1 for a failed operation, 2 for a usage mistake (bad arguments).
    var exitCode: Int32
    var message: String

    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A mistake in the command line; `verb` names the help page to point at.
    static func usage(_ message: String, verb: String? = nil) -> ToolError {
        let help = verb.map { "defaults \($0) --help" } ?? "defaults --help"
        return ToolError("\(message)\nSee '\(help)'.", exitCode: 2)
    }

    /// An error from the library (bad suite name, broken file with line and column, file-system failure).
    init(_ error: DefaultsError) {
        let text = error.description
        self.init(text.hasPrefix("error: ") ? String(text.dropFirst("error: ".count)) : text)
    }

    /// Any error thrown by the library's untyped initializers.
    init(_ error: any Error) {
        if let error = error as? DefaultsError {
            self.init(error)
        } else {
            self.init(String(describing: error))
        }
    }

    var description: String { message }
}

/// Writes to standard output and standard error with `write(2)`, unbuffered and whole lines at a
/// time, so a process reading a pipe sees each line as soon as it is printed.
enum Console {
    private static let lock = NSLock()

    static func out(_ text: String) {
        writeOut(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
        write(Data((text + "\n").utf8), to: STDERR_FILENO)
    }

    static func writeOut(_ data: Data) {
        write(data, to: STDOUT_FILENO)
    }

    private static func write(_ data: Data, to descriptor: Int32) {
        lock.lock()
        defer { lock.unlock() }
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var written = 0
            while written < buffer.count {
                let count = Foundation.write(descriptor, base + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                written += count
            }
        }
    }
}
