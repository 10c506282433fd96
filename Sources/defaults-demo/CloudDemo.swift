import EtcdLauncher
import Foundation
import ObservableDefaults
import Synchronization

/// `defaults-demo cloud`: two processes ("machines"), each with a `CloudKeyValueStore`, synced through a
/// throwaway single-node etcd; each change is timed from the write in one machine to its arrival in the
/// other. Without etcd on `PATH`, the development store shows the same observation in one process.
struct CloudDemo {
    static let namespace = "observable-defaults-demo"

    /// Runs the demo in `directory` (removed by the caller); returns whether every change arrived.
    static func run(directory: URL) -> Bool {
        guard let etcd = EtcdBinary.find() else { return developmentMode() }
        say("ObservableDefaults cloud demo: two machines share settings through etcd.\n")
        let node: EtcdNode
        do {
            node = try EtcdNode(executable: etcd)
        } catch {
            say("defaults-demo: cannot start etcd (\(etcd.path)): \(error)")
            return false
        }
        defer { node.stop() }
        say("Started a throwaway etcd node at \(node.endpoint.absoluteString) (pid \(node.pid ?? 0), data in \(node.directory.path)).")
        let address = "etcd://\(node.endpoint.host!):\(node.endpoint.port!)/\(namespace)"
        return CloudDemo(address: address, directory: directory).twoMachines()
    }

    let address: String
    let directory: URL

    private func twoMachines() -> Bool {
        let arrivals = Mutex<[(key: String, time: Double)]>([])
        let store: CloudKeyValueStore
        do {
            var configuration = try EtcdConfiguration(url: address)
            configuration.stateDirectory = directory.appendingPathComponent("machine-a")
            store = try CloudKeyValueStore(etcd: configuration)
        } catch {
            say("defaults-demo: cannot open the cloud store: \(error)")
            return false
        }
        let observation = store.observe { change in
            let time = Date().timeIntervalSince1970
            arrivals.withLock { list in for key in change.keys { list.append((key, time)) } }
        }
        defer { observation.cancel() }
        let machineB: MachineProcess
        do {
            machineB = try MachineProcess(address: address, state: directory.appendingPathComponent("machine-b"))
        } catch {
            say("defaults-demo: cannot start the second machine: \(error)")
            return false
        }
        defer { machineB.finish() }
        guard store.synchronize(), machineB.waitForLine(prefix: "ready") != nil else {
            say("   ✗ the machines did not sync with etcd: \(machineB.errorLines)")
            return false
        }
        say("Machine A is this process; machine B is a second process (pid \(machineB.pid)). Namespace '\(Self.namespace)'.\n")

        // 1. A writes, B hears it.
        say("1. Machine A sets volume = 8.")
        let start = Date().timeIntervalSince1970
        store.set(DefaultsValue.integer(8), forKey: "volume")
        var allArrived = true
        if let line = machineB.waitForLine(prefix: "arrived volume"), let time = Double(line.split(separator: " ")[2]) {
            say(String(format: "   → machine B: volume = 8 arrived %.1f ms after machine A's set (reason %@)", (time - start) * 1000, String(line.split(separator: " ")[3])))
        } else {
            say("   ✗ machine B did not hear volume within 5 seconds")
            allArrived = false
        }

        // 2. B writes, A hears it.
        say("\n2. Machine B sets greeting = \"hello from machine B\".")
        machineB.send("write greeting hello from machine B")
        let wrote = machineB.waitForLine(prefix: "wrote greeting").flatMap { Double($0.split(separator: " ")[2]) }
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        var arrival: Double?
        while arrival == nil && ContinuousClock.now < deadline {
            arrival = arrivals.withLock { $0.first { $0.key == "greeting" }?.time }
            if arrival == nil { usleep(500) }
        }
        if let wrote, let arrival {
            say(String(format: "   → machine A: greeting = \"%@\" arrived %.1f ms after machine B's set", store.string(forKey: "greeting") ?? "?", (arrival - wrote) * 1000))
        } else {
            say("   ✗ machine A did not hear greeting within 5 seconds")
            allArrived = false
        }
        // Each machine heard exactly the other's one change: no echo of its own write, no extra key.
        let heardByA = arrivals.withLock { $0.map(\.key) }
        let heardByB = machineB.lines.filter { $0.hasPrefix("arrived ") }.map { String($0.split(separator: " ")[1]) }
        say("""

            Changes heard: machine A \(heardByA), machine B \(heardByB) — neither hears its own write.

            Try it yourself with a real cluster (etcd on 127.0.0.1:2379), in two terminals:
              swift run defaults cloud watch --cloud etcd://127.0.0.1:2379/\(Self.namespace)
              swift run defaults cloud write greeting hi --cloud etcd://127.0.0.1:2379/\(Self.namespace)
            """)
        return allArrived && heardByA == ["greeting"] && heardByB == ["volume"]
    }

    /// Without etcd: the development store (memory only, one process) plays both sides.
    private static func developmentMode() -> Bool {
        say("""
            ObservableDefaults cloud demo — etcd is not installed, so this runs in development mode:
            memory only, in this one process; the "other machine" is simulated.
            To see two processes sync through a real etcd node, install it and run again:
              apt-get install -y etcd-server

            """)
        let store = CloudKeyValueStore.development
        let heard = Mutex<[(change: CloudChange, time: Double)]>([])
        let observation = store.observe(keys: ["greeting"]) { change in
            heard.withLock { $0.append((change, Date().timeIntervalSince1970)) }
        }
        defer { observation.cancel() }
        say("1. The simulated other machine sets greeting = \"hello from elsewhere\".")
        let start = Date().timeIntervalSince1970
        do {
            try store.simulateExternalChange(["greeting": .string("hello from elsewhere")], reason: .serverChange)
        } catch {
            say("   ✗ \(error)")
            return false
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while heard.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { usleep(500) }
        guard let first = heard.withLock({ $0.first }) else {
            say("   ✗ the observer did not hear the change within 5 seconds")
            return false
        }
        say(String(format: "   → greeting = \"%@\" arrived %.2f ms later (reason %@)", store.string(forKey: "greeting") ?? "?", (first.time - start) * 1000, first.change.reason.description))
        return true
    }
}

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
