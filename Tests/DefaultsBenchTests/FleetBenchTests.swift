import EtcdLauncher
import Foundation
import Testing
import TestSupport

/// Group 11 (fleet, etcd) of `defaults-bench` in a quick run: every side measured (the three raw floors, the
/// gateway, gRPC sharing a connection and each store on its own, gRPC through grpc-proxy), the member
/// serving one watcher per store directly and one for the whole fleet through the proxy, and nothing left
/// behind. No cost is asserted: numbers from a test run mean nothing.
@Suite(.serialized) struct FleetBenchTests {
    @Test(CloudBenchTests.etcdRequired) func quickRunMeasuresEverySideAndLeavesNothingBehind() throws {
        let scratch = TemporaryDirectory()
        let temporary = scratch.url
        defer { withExtendedLifetime(scratch) {} }
        let jsonURL = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "defaults-bench-fleet-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: jsonURL) }

        let result = try CloudBenchTests.run(["--quick", "--only", "11", "--json", jsonURL.path], temporary: temporary)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("## 11. Fleet (etcd)"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: jsonURL)) as? [String: Any]
        let groups = json?["groups"] as? [[String: Any]] ?? []
        try #require(groups.count == 1)
        let rows = Dictionary((groups[0]["rows"] as? [[String: Any]] ?? []).map { ($0["id"] as? String ?? "", $0) }) {
            first, _ in first
        }
        func p50(_ id: String) -> Double? {
            guard let row = rows[id], row["isMissing"] as? Bool == false else { return nil }
            return (row["statistics"] as? [String: Any])?["p50"] as? Double
        }
        for side in ["raw-grpc", "raw-grpc-shared", "raw-grpc-stream", "gateway", "grpc", "grpc-own", "grpc-proxy"] {
            for what in ["memory", "cpu", "watchers"] {
                #expect(
                    p50("\(side).\(what)") != nil, "\(side).\(what): \(rows["\(side).\(what)"]?["note"] ?? "missing")")
            }
        }
        // --quick: 100 stores; each direct store is one watcher on the member, the proxy is one for all.
        #expect(p50("raw-grpc.watchers") == 100, "the floor: one raw watch per connection")
        #expect(p50("gateway.watchers") == 100)
        #expect(p50("raw-grpc-shared.watchers") == 100, "the shared floor: one raw watch per stream")
        #expect(p50("raw-grpc-stream.watchers") == 100, "the one-stream floor: one watcher per watch ID")
        #expect(p50("grpc.watchers") == 100)
        #expect(p50("grpc-own.watchers") == 100)
        #expect(p50("grpc-proxy.watchers") == 1)
        #expect((p50("grpc.memory") ?? 0) > 0 && (p50("gateway.memory") ?? 0) > 0)

        let targets = json?["targets"] as? [[String: Any]] ?? []
        func status(_ prefix: String) -> String? {
            targets.first { ($0["target"] as? String ?? "").hasPrefix(prefix) }?["status"] as? String
        }
        #expect(["met", "not met"].contains(status("Fleet: a gRPC store costs the member ≤ 45 KB") ?? ""), "\(targets)")
        #expect(status("Fleet: through one grpc-proxy") == "met", "\(targets)")
        let memoryEvidence =
            targets.first {
                ($0["target"] as? String ?? "").hasPrefix("Fleet: a gRPC store costs the member ≤ 45 KB")
            }?[
                "evidence"] as? String ?? ""
        #expect(memoryEvidence.contains("the raw gRPC floor's (watches on one Watch stream)"), "\(memoryEvidence)")
        #expect(memoryEvidence.contains("the raw floor of N Watch streams on one connection"), "\(memoryEvidence)")
        #expect(memoryEvidence.contains("each store its own connection"), "\(memoryEvidence)")

        #expect(
            CloudBenchTests.processes(mentioning: temporary.path).isEmpty,
            "left running: \(CloudBenchTests.processes(mentioning: temporary.path))")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        #expect(leftovers.isEmpty, "left in TMPDIR: \(leftovers)")
    }
}
