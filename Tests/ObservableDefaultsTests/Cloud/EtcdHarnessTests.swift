import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The harness itself: a 3-member cluster forms on loopback ports, and a killed member restarts on its data.
@Suite(.serialized, EtcdCluster.required) struct EtcdHarnessTests {
    @Test func threeMembersFormOneClusterAndAKilledMemberComesBack() throws {
        let cluster = try EtcdCluster(members: 3)
        let list = try #require(try synchronousPost(cluster.endpoints[2], "/v3/cluster/member/list", "{}"))
        #expect(list.components(separatedBy: "\"clientURLs\"").count == 4, "member list: \(list)")
        cluster.kill(0)
        #expect(try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}") == nil)
        try cluster.restart(0)
        #expect(
            try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}")?.contains("\"leader\"") == true)
    }
}

/// The harness's `etcd grpc-proxy`: it starts in front of a member, serves gRPC only (its JSON gateway
/// answers 404, which is why the store needs gRPC to use it), and stopping it leaves no process or file.
@Suite(.serialized, EtcdCluster.required) struct EtcdGRPCProxyHarnessTests {
    @Test func aProxyStartsInFrontOfAMemberAndStopsWithoutTrace() throws {
        let cluster = try EtcdCluster(members: 1)
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        let pid = try #require(proxy.pid)
        #expect(etcdGet(proxy.endpoint, "/health")?.contains(#""health":"true""#) == true)
        #expect(try synchronousPost(proxy.endpoint, "/v3/maintenance/status", "{}") == nil)
        #expect(try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}") != nil)
        proxy.stop()
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
        #expect(!FileManager.default.fileExists(atPath: proxy.directory.path))
        #expect(etcdGet(proxy.endpoint, "/health") == nil)
    }
}

/// The port race of picking a free port and releasing it before etcd binds it: another process that takes
/// the port meanwhile (here: a socket of this test, listening on the first port handed out, or on the peer
/// port of the third member) makes etcd exit; the launcher starts the members again on other ports.
@Suite(.serialized, EtcdCluster.required) struct EtcdPortRaceTests {
    let directory = TemporaryDirectory()

    /// `members` members started with the `taken`-th port handed out (1-based) held by a listening socket.
    @Test(arguments: [(members: 1, taken: 1), (members: 3, taken: 6)])
    func aPortTakenBeforeEtcdBindsItIsSurvivedOnOtherPorts(_ setup: (members: Int, taken: Int)) throws {
        let executable = try #require(EtcdCluster.executable)
        let squatter = try ListeningSocket()
        defer { squatter.close() }
        var handedOut: [Int] = []
        let started = try EtcdClusterLauncher.start(
            names: (0..<setup.members).map { "m\($0)" }, in: directory.url, token: "race-\(setup.members)",
            executable: executable,
            ports: {
                handedOut.append(handedOut.count + 1 == setup.taken ? squatter.port : freeLoopbackPort())
                return handedOut.last!
            })
        defer { started.forEach { stopEtcdProcess($0.process) } }
        #expect(handedOut.count == 4 * setup.members)  // two attempts: client and peer port per member each
        let inUse = started.flatMap { [$0.member.clientURL.port, $0.member.peerURL.port] }
        #expect(!inUse.contains(squatter.port))
        for entry in started {
            #expect(
                try synchronousPost(entry.member.clientURL, "/v3/maintenance/status", "{}")?.contains("\"leader\"")
                    == true)
        }
    }
}

/// A member that never gets a leader (one of a two-member cluster, started alone: no quorum) makes the wait
/// time out with a reason: the member's name and URL and what its log last said.
@Suite(.serialized, EtcdCluster.required) struct EtcdStartTimeoutTests {
    let directory = TemporaryDirectory()

    @Test func aMemberWithoutALeaderTimesOutNamingItselfAndItsLog() throws {
        let executable = try #require(EtcdCluster.executable)
        let members = ["alone", "absent"].map { EtcdMember(name: $0, in: directory.url) }
        let logFile = EtcdClusterLauncher.logFile(of: members[0], in: directory.url)
        let process = try members[0].launch(
            cluster: members, token: "no-quorum", executable: executable, logFile: logFile)
        defer { stopEtcdProcess(process) }
        let outcome = EtcdClusterLauncher.waitUntilStarted(
            [.init(member: members[0], process: process)], in: directory.url, timeout: .seconds(2))
        guard case .timedOut(let which) = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(which.hasPrefix("alone at \(members[0].clientURL.absoluteString) (its log ends: "), "\(which)")
        // etcd's log lines (zap's JSON), not "nothing".
        #expect(which.contains(#""level":"#), "\(which)")
    }
}

/// A loopback TCP socket listening on a free port until ``close()``.
final class ListeningSocket {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && listen(descriptor, 1) == 0
                    && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard descriptor >= 0, listening else {
            throw EtcdTestError("cannot listen on a loopback port: \(String(cString: strerror(errno)))")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(descriptor) }
}

/// A blocking POST with a two-second timeout: the body as text when the answer was 200, else nil.
/// (Through the library's socket client: `URLSession` on Linux crashes on etcd's error answers.)
/// `transport` reaches `https` endpoints (default: the system trust store only).
func synchronousPost(
    _ endpoint: URL, _ path: String, _ body: String, headers: [String: String] = [:],
    transport: EtcdTransport = EtcdTransport()
) throws -> String? {
    guard
        case .answer(200, let data) = EtcdHTTP.post(
            url: endpoint.appendingPathComponent(path), body: Data(body.utf8), headers: headers, timeout: 2,
            transport: transport)
    else {
        return nil
    }
    return String(decoding: data, as: UTF8.self)
}
