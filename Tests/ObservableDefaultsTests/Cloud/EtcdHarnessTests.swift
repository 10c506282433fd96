import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
func synchronousPost(_ endpoint: URL, _ path: String, _ body: String) throws -> String? {
    var request = URLRequest(url: endpoint.appendingPathComponent(path))
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    request.timeoutInterval = 2
    let result = Locked<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { data, response, _ in
        if (response as? HTTPURLResponse)?.statusCode == 200, let data { result.withLock { $0 = String(decoding: data, as: UTF8.self) } }
        done.signal()
    }.resume()
    done.wait()
    return result.withLock { $0 }
}
