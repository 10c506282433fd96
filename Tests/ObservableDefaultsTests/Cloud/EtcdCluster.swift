import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Real etcd processes for the cloud tests: one node or a cluster of members on free loopback ports, each
/// member in its own temporary data directory, stopped by PID and the directory removed when the cluster is
/// released, and at exit (``EtcdProcessReaper``) for one never released, as ``shared``.
/// Starting the members (on other ports when one is taken before etcd binds it) and waiting for them is the
/// `EtcdLauncher` target's (shared with the demo and the bench); killing, pausing, restarting and replacing
/// members is the tests' own.
///
/// Tests that need etcd carry ``EtcdCluster/required``: without an `etcd` binary they are skipped with the
/// install command, except under `CI=true`, where they run and fail.
final class EtcdCluster: Sendable {
    typealias Member = EtcdMember

    static let installCommand = EtcdBinary.installCommand

    /// The `etcd` binary on `PATH`, if any.
    static let executable: URL? = EtcdBinary.find()

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

    /// The members' client URLs, in member order (`https` with TLS).
    var endpoints: [URL] { members.map(\.clientURL) }
    /// Plain `http` client URLs, in member order: the same as ``endpoints`` without TLS, a second
    /// listener with it (for raw test requests that must not go through the code under test).
    var plainEndpoints: [URL] { members.map(\.plainClientURL) }

    /// Starts `members` members and waits (bounded) until every one reports a leader; `tls` serves their
    /// client URLs over TLS.
    init(members count: Int, extraArguments: [String] = [], tls: EtcdMemberTLS? = nil) throws {
        guard let executable = Self.executable else {
            throw EtcdTestError("etcd is not installed and CI=true requires the cloud tests: \(Self.installCommand)")
        }
        let directory = TemporaryDirectory("etcd")
        self.directory = directory
        // A static (``shared``) is never released: its members' data (over 60 MB) goes at exit, after them.
        EtcdProcessReaper.register(directory: directory.url)
        generation = Locked(0)
        self.executable = executable
        self.extraArguments = extraArguments
        let started: [EtcdClusterLauncher.Started]
        do {
            started = try EtcdClusterLauncher.start(
                names: (0..<count).map { "m\($0)" }, in: directory.url, tls: tls,
                token: Self.token(directory, generation: 0),
                executable: executable, extraArguments: extraArguments)
        } catch {
            EtcdProcessReaper.unregister(directory: directory.url)  // removed with `directory`, now
            throw error
        }
        members = started.map(\.member)
        processes = Locked(
            Dictionary(uniqueKeysWithValues: started.map(\.process).enumerated().map { ($0.offset, $0.element) }))
    }

    /// The cluster token of `generation`: a new one makes a new cluster ID on the same ports.
    private static func token(_ directory: TemporaryDirectory, generation: Int) -> String {
        directory.url.lastPathComponent + "-\(generation)"
    }

    private let executable: URL
    private let extraArguments: [String]
    /// Bumped by ``replaceWithNewCluster()``: part of the cluster token, so the new cluster has a new ID.
    private let generation: Locked<Int>

    /// Starts member `index` on its ports (`as`: the same member serving clients elsewhere) with `members`
    /// as the cluster.
    private func launch(_ index: Int, as member: Member? = nil, cluster: [Member]? = nil) throws {
        let member = member ?? members[index]
        let process = try member.launch(
            cluster: cluster ?? members, token: Self.token(directory, generation: generation.withLock { $0 }),
            executable: executable, logFile: EtcdClusterLauncher.logFile(of: member, in: directory.url),
            extraArguments: extraArguments)
        processes.withLock { $0[index] = process }
    }

    /// Polls the member's status until it reports a leader (at most `timeout`); a member that exited
    /// (its port taken meanwhile, say) fails at once with the reason from its log.
    func waitUntilHealthy(_ index: Int, as member: Member? = nil, timeout: Duration = .seconds(20)) throws {
        let member = member ?? members[index]
        guard let process = processes.withLock({ $0[index] }) else {
            throw EtcdTestError("etcd member \(member.name) is not running")
        }
        switch EtcdClusterLauncher.waitUntilStarted(
            [.init(member: member, process: process)], in: directory.url, timeout: timeout)
        {
        case .healthy: return
        case .portTaken(let line): throw EtcdTestError("etcd member \(member.name) cannot bind its port again: \(line)")
        case .exited(let why): throw EtcdTestError(why)
        case .timedOut(let which):
            throw EtcdTestError(
                "etcd member \(member.name) did not become healthy within \(timeout): no leader at \(which)")
        }
    }

    /// kill -9 of one member.
    func kill(_ index: Int) {
        guard let process = processes.withLock({ $0.removeValue(forKey: index) }) else { return }
        stopEtcdProcess(process)
    }

    /// SIGSTOP (`resume: false`) or SIGCONT of one member: a hung member keeps its connections open.
    /// Returns once the kernel shows the member stopped (or running again); a member that is not running,
    /// or does not reach that state within 5 seconds, is a recorded test failure, never a silent no-op.
    func pause(_ index: Int, resume: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let pid = processes.withLock({ $0[index]?.processIdentifier }) else {
            Issue.record(
                "cannot \(resume ? "resume" : "pause") etcd member \(index): it is not running",
                sourceLocation: sourceLocation)
            return
        }
        Glibc.kill(pid, resume ? SIGCONT : SIGSTOP)
        let deadline = Date().addingTimeInterval(5)
        while Self.isStopped(pid) == resume {
            guard Date() < deadline else {
                Issue.record(
                    "etcd member \(index) (pid \(pid)) is not \(resume ? "running" : "stopped") 5 s after the signal",
                    sourceLocation: sourceLocation)
                return
            }
            usleep(1_000)
        }
    }

    /// Whether `/proc/<pid>/stat` shows the process stopped by a signal (state `T`).
    private static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).first == "T"
    }

    /// Starts a killed member again on its data directory and ports.
    func restart(_ index: Int, waitForHealth: Bool = true) throws {
        try launch(index)
        if waitForHealth { try waitUntilHealthy(index) }
    }

    /// Kills every member, deletes their data and starts a new cluster (a new cluster ID) on the same ports.
    ///
    /// With `seed`, the new cluster first serves clients on other ports only, given to `seed` (which fills
    /// it), and is then restarted on the usual ones: clients of the usual ports find it filled already.
    func replaceWithNewCluster(seed: (([URL]) throws -> Void)? = nil) throws {
        for index in members.indices { kill(index) }
        for member in members { try FileManager.default.removeItem(at: member.dataDirectory) }
        generation.withLock { $0 += 1 }
        if let seed {
            let hidden = members.map { $0.servingClients(onPort: freeLoopbackPort()) }
            for index in members.indices { try launch(index, as: hidden[index], cluster: hidden) }
            for index in members.indices { try waitUntilHealthy(index, as: hidden[index]) }
            try seed(hidden.map(\.clientURL))
            for index in members.indices { kill(index) }
        }
        for index in members.indices { try launch(index) }
        for index in members.indices { try waitUntilHealthy(index) }
    }

    deinit {
        for (_, process) in processes.withLock({ $0 }) { stopEtcdProcess(process) }
        try? FileManager.default.removeItem(at: directory.url)
        EtcdProcessReaper.unregister(directory: directory.url)
    }
}

struct EtcdTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
