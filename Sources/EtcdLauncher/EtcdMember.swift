import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// TLS on a member's client port (etcd's `--cert-file`/`--key-file`, all PEM); with `clientCA`, clients
/// must present a certificate signed by it (`--client-cert-auth --trusted-ca-file`).
public struct EtcdMemberTLS: Sendable {
    /// The server certificate.
    public let certificateFile: URL
    /// The server certificate's private key.
    public let keyFile: URL
    /// The CA client certificates must chain to; `nil`: no client certificate is asked for.
    public let clientCA: URL?

    /// TLS settings for a member.
    public init(certificateFile: URL, keyFile: URL, clientCA: URL? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCA = clientCA
    }
}

/// One etcd process's identity: its name, loopback client and peer URLs, and data directory.
///
/// ``launch(cluster:token:executable:logFile:extraArguments:)`` starts it as a member of `cluster`; the
/// caller owns the returned process and stops it by PID (``EtcdProcessReaper`` does so at exit).
public struct EtcdMember: Sendable {
    /// The member's name (`--name`).
    public let name: String
    /// Where clients reach it (`http://127.0.0.1:PORT`, `https://` with ``tls``).
    public let clientURL: URL
    /// A plain `http` client URL for the harness's own requests (health, setup): ``clientURL`` without
    /// TLS, a second listener on another port with TLS.
    public let plainClientURL: URL
    /// TLS on ``clientURL``, if any.
    public let tls: EtcdMemberTLS?
    /// Where the other members reach it.
    public let peerURL: URL
    /// Its data directory (created by etcd).
    public let dataDirectory: URL

    /// A member on loopback ports from `ports` (default: ports free now, which another process may still
    /// take before etcd binds them: ``EtcdClusterLauncher`` starts on other ports then), with its data in
    /// `directory/name`; `tls` serves the client URL over TLS (and adds the plain ``plainClientURL``).
    /// `ports` is asked for the client port, then (with TLS) the plain client port, then the peer port.
    public init(name: String, in directory: URL, tls: EtcdMemberTLS? = nil, ports: () -> Int = freeLoopbackPort) {
        self.name = name
        self.tls = tls
        clientURL = URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(ports())")!
        plainClientURL = tls == nil ? clientURL : URL(string: "http://127.0.0.1:\(ports())")!
        peerURL = URL(string: "http://127.0.0.1:\(ports())")!
        dataDirectory = directory.appendingPathComponent(name, isDirectory: true)
    }

    private init(
        name: String, clientURL: URL, tls: EtcdMemberTLS?, plainClientURL: URL, peerURL: URL, dataDirectory: URL
    ) {
        self.name = name
        self.clientURL = clientURL
        self.tls = tls
        self.plainClientURL = plainClientURL
        self.peerURL = peerURL
        self.dataDirectory = dataDirectory
    }

    /// The same member (name, peer URL, data directory: the same cluster) serving plain `http` clients on
    /// `port` instead: to work on a cluster before the clients that know its usual ports can reach it.
    public func servingClients(onPort port: Int) -> EtcdMember {
        let url = URL(string: "http://127.0.0.1:\(port)")!
        return EtcdMember(
            name: name, clientURL: url, tls: nil, plainClientURL: url, peerURL: peerURL, dataDirectory: dataDirectory)
    }

    /// Starts etcd as this member of `cluster` (every member, this one included), with `token` as the
    /// cluster token and its log in `logFile`; registers the PID with ``EtcdProcessReaper``.
    public func launch(
        cluster: [EtcdMember], token: String, executable: URL, logFile: URL, extraArguments: [String] = []
    ) throws -> Process {
        let initialCluster = cluster.map { "\($0.name)=\($0.peerURL.absoluteString)" }.joined(separator: ",")
        var listen = clientURL.absoluteString
        var tlsArguments: [String] = []
        if let tls {
            listen += "," + plainClientURL.absoluteString
            tlsArguments = ["--cert-file", tls.certificateFile.path, "--key-file", tls.keyFile.path]
            if let clientCA = tls.clientCA {
                tlsArguments += ["--client-cert-auth", "--trusted-ca-file", clientCA.path]
            }
        }
        // what ``EtcdClusterLauncher/waitUntilStarted(_:in:timeout:)`` reads is this run's
        try? FileManager.default.removeItem(at: logFile)
        let process = Process()
        process.executableURL = executable
        process.arguments =
            [
                "--name", name, "--data-dir", dataDirectory.path,
                "--listen-client-urls", listen, "--advertise-client-urls", clientURL.absoluteString,
                "--listen-peer-urls", peerURL.absoluteString, "--initial-advertise-peer-urls", peerURL.absoluteString,
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new", "--initial-cluster-token", token,
                "--logger", "zap", "--log-outputs", logFile.path
            ] + tlsArguments + extraArguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        EtcdProcessReaper.register(process.processIdentifier)
        return process
    }

    /// How a launched member's start ended.
    public enum StartOutcome: Sendable, Equatable {
        /// It reports a leader.
        case healthy
        /// It exited because one of its ports was taken (by another process since the port was picked).
        case portTaken(String)
        /// It exited for another reason: the end of its log.
        case exited(String)
        /// No leader within the timeout: which members had none, with the end of each one's log.
        case timedOut(String)
    }

    /// Why `process` (this member's, logging to `logFile`) exited, from its log; `nil` while it runs.
    func exitOutcome(_ process: Process, logFile: URL) -> StartOutcome? {
        guard !process.isRunning else { return nil }
        let lines = Self.logLines(logFile)
        if let line = lines.first(where: { $0.contains("address already in use") }) { return .portTaken(String(line)) }
        return .exited(
            "etcd member \(name) exited with status \(process.terminationStatus): \(lines.suffix(3).joined(separator: "\n"))"
        )
    }

    /// This member (logging to `logFile`) as a timeout names it: its name, client URL and the last lines of
    /// its log, which say what it was waiting for (a peer, an election, its disk).
    func notReadyDescription(logFile: URL) -> String {
        let tail = Self.logLines(logFile).suffix(2)
        return
            "\(name) at \(clientURL.absoluteString) (its log ends: \(tail.isEmpty ? "nothing" : tail.joined(separator: "\n")))"
    }

    private static func logLines(_ logFile: URL) -> [Substring] {
        ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// Whether the member reports a leader now (within two seconds).
    var hasLeader: Bool { EtcdStatusProbe.hasLeader(plainClientURL) }
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
