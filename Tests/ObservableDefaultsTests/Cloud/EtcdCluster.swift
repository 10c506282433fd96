import Foundation
import Testing
@testable import ObservableDefaults

#if canImport(Glibc)
import Glibc
#endif

/// Real etcd processes for the cloud tests: one node or a cluster of members on free loopback ports, each
/// member in its own temporary data directory, stopped by PID when the cluster is released (and at exit).
///
/// Tests that need etcd carry ``EtcdCluster/required``: without an `etcd` binary they are skipped with the
/// install command, except under `CI=true`, where they run and fail.
final class EtcdCluster: Sendable {
    /// One etcd process.
    struct Member: Sendable {
        let name: String
        let clientURL: URL
        let peerURL: URL
        let dataDirectory: URL
    }

    static let installCommand = "apt-get install -y etcd-server"

    /// The `etcd` binary on `PATH`, if any.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("etcd") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether the etcd tests run: etcd is installed, or CI demands them (and then they fail without it).
    static var shouldRun: Bool {
        executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// The trait of every test that needs a real etcd.
    static var required: ConditionTrait {
        .enabled(if: shouldRun, "etcd is not installed; install it with `\(installCommand)` to run the cloud tests")
    }

    /// One single node shared by the tests that need nothing else (each uses its own namespace).
    static let shared: Result<EtcdCluster, any Error> = Result { try EtcdCluster(members: 1) }

    /// The shared node, or the reason it could not start.
    static func sharedNode() throws -> EtcdCluster { try shared.get() }

    let members: [Member]
    private let directory: TemporaryDirectory
    private let processes: Locked<[Int: Process]>

    /// The members' client URLs, in member order.
    var endpoints: [URL] { members.map(\.clientURL) }

    /// Starts `members` members and waits (bounded) until every one reports a leader.
    init(members count: Int, extraArguments: [String] = []) throws {
        guard let executable = Self.executable else {
            throw EtcdTestError("etcd is not installed and CI=true requires the cloud tests: \(Self.installCommand)")
        }
        let directory = TemporaryDirectory("etcd")
        self.directory = directory
        members = (0..<count).map { index in
            Member(
                name: "m\(index)", clientURL: URL(string: "http://127.0.0.1:\(freeLoopbackPort())")!,
                peerURL: URL(string: "http://127.0.0.1:\(freeLoopbackPort())")!,
                dataDirectory: directory.url.appendingPathComponent("m\(index)")
            )
        }
        processes = Locked([:])
        generation = Locked(0)
        self.executable = executable
        self.extraArguments = extraArguments
        for index in members.indices { try launch(index) }
        for index in members.indices { try waitUntilHealthy(index) }
    }

    private let executable: URL
    private let extraArguments: [String]
    /// Bumped by ``replaceWithNewCluster()``: part of the cluster token, so the new cluster has a new ID.
    private let generation: Locked<Int>

    private func launch(_ index: Int) throws {
        let member = members[index]
        let cluster = members.map { "\($0.name)=\($0.peerURL.absoluteString)" }.joined(separator: ",")
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--name", member.name, "--data-dir", member.dataDirectory.path,
            "--listen-client-urls", member.clientURL.absoluteString,
            "--advertise-client-urls", member.clientURL.absoluteString,
            "--listen-peer-urls", member.peerURL.absoluteString,
            "--initial-advertise-peer-urls", member.peerURL.absoluteString,
            "--initial-cluster", cluster, "--initial-cluster-state", "new",
            "--initial-cluster-token", directory.url.lastPathComponent + "-\(generation.withLock { $0 })",
            "--logger", "zap", "--log-outputs", directory.url.appendingPathComponent("\(member.name).log").path,
        ] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.withLock { $0[index] = process }
        EtcdProcessReaper.register(process.processIdentifier)
    }

    /// Polls the member's status until it reports a leader (at most `timeout`).
    func waitUntilHealthy(_ index: Int, timeout: Duration = .seconds(20)) throws {
        let healthy = eventually(timeout: timeout) {
            (try? synchronousPost(members[index].clientURL, "/v3/maintenance/status", "{}"))?.contains("\"leader\"") == true
        }
        guard healthy else { throw EtcdTestError("etcd member \(members[index].name) at \(members[index].clientURL) did not become healthy within \(timeout)") }
    }

    /// kill -9 of one member.
    func kill(_ index: Int) {
        guard let process = processes.withLock({ $0.removeValue(forKey: index) }) else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        EtcdProcessReaper.unregister(process.processIdentifier)
    }

    /// SIGSTOP (`resume: false`) or SIGCONT of one member: a hung member keeps its connections open.
    func pause(_ index: Int, resume: Bool = false) {
        guard let pid = processes.withLock({ $0[index]?.processIdentifier }) else { return }
        Glibc.kill(pid, resume ? SIGCONT : SIGSTOP)
    }

    /// Starts a killed member again on its data directory and ports.
    func restart(_ index: Int, waitForHealth: Bool = true) throws {
        try launch(index)
        if waitForHealth { try waitUntilHealthy(index) }
    }

    /// Kills every member, deletes their data and starts a new cluster (a new cluster ID) on the same ports.
    func replaceWithNewCluster() throws {
        for index in members.indices { kill(index) }
        for member in members { try FileManager.default.removeItem(at: member.dataDirectory) }
        generation.withLock { $0 += 1 }
        for index in members.indices { try launch(index) }
        for index in members.indices { try waitUntilHealthy(index) }
    }

    deinit {
        for (_, process) in processes.withLock({ $0 }) {
            Glibc.kill(process.processIdentifier, SIGCONT)
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            EtcdProcessReaper.unregister(process.processIdentifier)
        }
    }
}

/// Kills the etcd processes still running when the test process exits (the shared node, or a cluster a
/// failed test left behind), by PID.
enum EtcdProcessReaper {
    private static let pids = Locked<Set<Int32>>([])
    private static let installed: Void = { atexit { EtcdProcessReaper.killAll() } }()

    static func register(_ pid: Int32) {
        _ = installed
        pids.withLock { _ = $0.insert(pid) }
    }

    static func unregister(_ pid: Int32) { pids.withLock { _ = $0.remove(pid) } }

    static func killAll() {
        for pid in pids.withLock({ $0 }) {
            Glibc.kill(pid, SIGCONT)
            Glibc.kill(pid, SIGKILL)
        }
    }
}

struct EtcdTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback TCP port nobody listens on now (bound to port 0, read back, released).
func freeLoopbackPort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0, "socket failed")
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
        }
    }
    precondition(bound, "bind to a loopback port failed")
    return Int(UInt16(bigEndian: address.sin_port))
}
