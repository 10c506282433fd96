import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One etcd process's identity: its name, loopback client and peer URLs, and data directory.
///
/// ``launch(cluster:token:executable:logFile:extraArguments:)`` starts it as a member of `cluster`; the
/// caller owns the returned process and stops it by PID (``EtcdProcessReaper`` does so at exit).
public struct EtcdMember: Sendable {
    /// The member's name (`--name`).
    public let name: String
    /// Where clients reach it (`http://127.0.0.1:PORT`).
    public let clientURL: URL
    /// Where the other members reach it.
    public let peerURL: URL
    /// Its data directory (created by etcd).
    public let dataDirectory: URL

    /// A member on two free loopback ports, with its data in `directory/name`.
    public init(name: String, in directory: URL) {
        self.name = name
        clientURL = URL(string: "http://127.0.0.1:\(freeLoopbackPort())")!
        peerURL = URL(string: "http://127.0.0.1:\(freeLoopbackPort())")!
        dataDirectory = directory.appendingPathComponent(name, isDirectory: true)
    }

    /// Starts etcd as this member of `cluster` (every member, this one included), with `token` as the
    /// cluster token and its log in `logFile`; registers the PID with ``EtcdProcessReaper``.
    public func launch(
        cluster: [EtcdMember], token: String, executable: URL, logFile: URL, extraArguments: [String] = []
    ) throws -> Process {
        let initialCluster = cluster.map { "\($0.name)=\($0.peerURL.absoluteString)" }.joined(separator: ",")
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--name", name, "--data-dir", dataDirectory.path,
            "--listen-client-urls", clientURL.absoluteString, "--advertise-client-urls", clientURL.absoluteString,
            "--listen-peer-urls", peerURL.absoluteString, "--initial-advertise-peer-urls", peerURL.absoluteString,
            "--initial-cluster", initialCluster, "--initial-cluster-state", "new", "--initial-cluster-token", token,
            "--logger", "zap", "--log-outputs", logFile.path,
        ] + extraArguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        EtcdProcessReaper.register(process.processIdentifier)
        return process
    }

    /// Polls the member's status (every 50 ms, at most `timeout`) until it reports a leader.
    public func waitUntilHealthy(timeout: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        repeat {
            if EtcdStatusProbe.hasLeader(clientURL) { return true }
            usleep(50_000)
        } while ContinuousClock.now < deadline
        return EtcdStatusProbe.hasLeader(clientURL)
    }
}

/// Where the `etcd` binary is, and how to get it.
public enum EtcdBinary {
    /// The command that installs etcd on Debian and Ubuntu.
    public static let installCommand = "apt-get install -y etcd-server"

    /// The `etcd` executable on `path` (a `PATH`-style list; default: this process's `PATH`), if any.
    public static func find(path: String? = nil) -> URL? {
        let path = path ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("etcd") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}

/// Kills the etcd processes still registered when this process exits, by PID (SIGCONT first, so a
/// paused member dies too), waits for them, and then removes the directories registered for removal.
public enum EtcdProcessReaper {
    private static let pids = Mutex<Set<Int32>>([])
    private static let directories = Mutex<Set<URL>>([])
    private static let installed: Void = { atexit { EtcdProcessReaper.killAll() } }()

    /// Kill `pid` at exit unless it is unregistered first.
    public static func register(_ pid: Int32) {
        _ = installed
        pids.withLock { _ = $0.insert(pid) }
    }

    /// Forget `pid` (it was stopped and reaped).
    public static func unregister(_ pid: Int32) { pids.withLock { _ = $0.remove(pid) } }

    /// Remove `directory` at exit (after the processes are dead) unless it is unregistered first.
    public static func register(directory: URL) {
        _ = installed
        directories.withLock { _ = $0.insert(directory) }
    }

    /// Forget `directory` (it was removed).
    public static func unregister(directory: URL) { directories.withLock { _ = $0.remove(directory) } }

    /// Kills every registered process, waits for each, and removes the registered directories.
    public static func killAll() {
        let running = pids.withLock { $0 }
        for pid in running {
            kill(pid, SIGCONT)
            kill(pid, SIGKILL)
        }
        for pid in running { _ = waitpid(pid, nil, 0) }  // ECHILD when already reaped: then it is gone too
        for directory in directories.withLock({ $0 }) { try? FileManager.default.removeItem(at: directory) }
    }
}

/// Stops `process` by PID (SIGKILL; SIGCONT first in case it is paused) and reaps it.
public func stopEtcdProcess(_ process: Process) {
    kill(process.processIdentifier, SIGCONT)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    EtcdProcessReaper.unregister(process.processIdentifier)
}
