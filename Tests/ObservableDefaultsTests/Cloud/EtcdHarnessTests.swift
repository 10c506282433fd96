import Foundation
import Testing
@testable import ObservableDefaults

/// The harness itself: a 3-member cluster forms on loopback ports, and a killed member restarts on its data.
@Suite(.serialized, EtcdCluster.required) struct EtcdHarnessTests {
    @Test func threeMembersFormOneClusterAndAKilledMemberComesBack() throws {
        let cluster = try EtcdCluster(members: 3)
        let list = try #require(try synchronousPost(cluster.endpoints[2], "/v3/cluster/member/list", "{}"))
        #expect(list.components(separatedBy: "\"clientURLs\"").count == 4, "member list: \(list)")
        cluster.kill(0)
        #expect(try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}") == nil)
        try cluster.restart(0)
        #expect(try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}")?.contains("\"leader\"") == true)
    }
}

/// A blocking POST with a two-second timeout: the body as text when the answer was 200, else nil.
/// (Through the library's socket client: `URLSession` on Linux crashes on etcd's error answers.)
/// `transport` reaches `https` endpoints (default: the system trust store only).
func synchronousPost(
    _ endpoint: URL, _ path: String, _ body: String, headers: [String: String] = [:], transport: EtcdTransport = EtcdTransport()
) throws -> String? {
    guard case .answer(200, let data) = EtcdHTTP.post(
        url: endpoint.appendingPathComponent(path), body: Data(body.utf8), headers: headers, timeout: 2, transport: transport)
    else {
        return nil
    }
    return String(decoding: data, as: UTF8.self)
}
