import Foundation
import Synchronization

/// Machine B: the demo re-executed in `cloud-machine` mode, with its output lines collected.
final class MachineProcess: Sendable {
    private let process: Process
    private let input: FileHandle
    private let output = LineLog()

    init(address: String, state: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["cloud-machine", address, state.path]
        let inPipe = Pipe(), outPipe = Pipe()
        process.standardInput = inPipe
        process.standardOutput = outPipe
        try process.run()
        self.process = process
        input = inPipe.fileHandleForWriting
        let reader = outPipe.fileHandleForReading
        let output = self.output
        Thread {
            var pending = ""
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    output.append(line)
                }
            }
        }.start()
    }

    var pid: Int32 { process.processIdentifier }
    var lines: [String] { output.lines }
    var errorLines: [String] { lines.filter { $0.hasPrefix("error ") } }

    /// Waits (at most five seconds) for a line starting with `prefix`.
    func waitForLine(prefix: String) -> String? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        repeat {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            usleep(500)
        } while ContinuousClock.now < deadline
        return nil
    }

    func send(_ line: String) { input.write(Data((line + "\n").utf8)) }

    /// Ends its input and waits (bounded) for it to exit; kills it by PID if it does not.
    func finish() {
        try? input.close()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while process.isRunning && ContinuousClock.now < deadline { usleep(1000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Lines read from a child, appended by its reader thread.
final class LineLog: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    func append(_ line: String) { storage.withLock { $0.append(line) } }
}
