/// The fleet group's targets (issue 31): a store watching over gRPC costs the member at most 45 KB of memory
/// and 20 µs of CPU per change (the JSON gateway's watcher: about 95 KB and 92 µs), checked on the default
/// side (the stores of the process sharing one connection), and through one `etcd grpc-proxy` the member
/// serves one watcher for the whole fleet. The default side's evidence relates it to the raw floor of N
/// watches on one Watch stream (what etcd's Go client makes of a process's watches).
enum FleetTargets {
    static let memory = "Fleet: a gRPC store costs the member ≤ 45 KB of memory"
    static let cpu = "Fleet: a gRPC store costs the member ≤ 20 µs of CPU per change"
    static let proxy = "Fleet: through one grpc-proxy the member serves one watcher for the fleet"

    static func evaluate(_ group: GroupResult) -> [TargetResult] {
        func reason(_ id: String) -> String { group.rows.first { $0.id == id }?.note ?? "row \(id) missing" }
        func ratio(_ side: String, _ floor: String, _ id: String) -> String {
            guard let value = group.row("\(side).\(id)"), let base = group.row("\(floor).\(id)") else { return "" }
            return " (\(Formatting.ratio(value.statistics.p50 / base.statistics.p50)))"
        }
        func beside(_ id: String, _ format: (Double) -> String) -> String {
            let floor = group.row("raw-grpc-stream.\(id)").map {
                "; the raw gRPC floor's (watches on one Watch stream): \(format($0.statistics.p50))"
                    + ratio("grpc", "raw-grpc-stream", id)
            }
            let streams = group.row("raw-grpc-shared.\(id)").map {
                "; the raw floor of N Watch streams on one connection: \(format($0.statistics.p50))"
            }
            let own = group.row("grpc-own.\(id)").map { row in
                "; each store its own connection: \(format(row.statistics.p50)), against the raw gRPC floor's "
                    + "(each watch its own connection): "
                    + (group.row("raw-grpc.\(id)").map { format($0.statistics.p50) } ?? "not measured")
                    + ratio("grpc-own", "raw-grpc", id)
            }
            let gateway = group.row("gateway.\(id)").map { "; the gateway's: \(format($0.statistics.p50))" }
            return (floor ?? "") + (streams ?? "") + (own ?? "") + (gateway ?? "")
        }
        var results: [TargetResult] = []
        if let memory = group.row("grpc.memory") {
            let value = memory.statistics.p50
            results.append(
                TargetResult(
                    target: Self.memory, status: value <= 45 * 1024 ? .met : .notMet,
                    evidence: "\(Formatting.bytes(value)) per store\(beside("memory", Formatting.bytes))"))
        } else {
            results.append(TargetResult(target: Self.memory, status: .notMeasured, evidence: reason("grpc.memory")))
        }
        if let cpu = group.row("grpc.cpu") {
            let value = cpu.statistics.p50
            results.append(
                TargetResult(
                    target: Self.cpu, status: value <= 20_000 ? .met : .notMet,
                    evidence: "\(Formatting.duration(value)) per change per store\(beside("cpu", Formatting.duration))"
                ))
        } else {
            results.append(TargetResult(target: Self.cpu, status: .notMeasured, evidence: reason("grpc.cpu")))
        }
        if let watchers = group.row("grpc-proxy.watchers") {
            let value = Int(watchers.statistics.p50)
            results.append(
                TargetResult(
                    target: proxy, status: value == 1 ? .met : .notMet,
                    evidence: "the member serves \(value) watcher\(value == 1 ? "" : "s") for the fleet"))
        } else {
            results.append(TargetResult(target: proxy, status: .notMeasured, evidence: reason("grpc-proxy.watchers")))
        }
        return results
    }
}
