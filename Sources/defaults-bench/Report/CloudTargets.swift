/// The cloud group's targets: propagation within 1.15× of the compare-and-swap floor with the writer's own
/// watch — the least the semantics allow: an upload is a compare-and-swap, and a syncing store watches the
/// namespace it writes (issue 30; the local copy is still written at once) — measured over the library's
/// transport, gRPC (issue 31), and no worse against it than the library over the JSON gateway against the
/// gateway's floor in the same run (issue 31's "no worse than today"); reported, the same floor over the JSON
/// gateway and the raw put floor (issue 11's target, 1.3×); a cloud property read within 1.5× of plain
/// `@Observable`; the fan-out numbers beside the floor's (no target).
enum CloudTargets {
    static let propagation =
        "Cloud propagation p50 within 1.15× of the compare-and-swap floor with the writer's own watch, over gRPC"
    static let propagationGatewayFloor =
        "Cloud propagation beside the same floor over the JSON gateway (the transport before issue 31)"
    static let propagationNoWorse =
        "Cloud propagation over gRPC no worse against its floor than the library over the JSON gateway against the gateway's floor, in the same run"
    static let propagationPutFloor =
        "Cloud propagation beside the raw etcd put floor (raw put → raw watch; issue 11's 1.3×)"
    static let read = "Cloud property read within 1.5× of plain `@Observable`"
    static let fanOut = "Cloud fan-out: one write reaching every observer process (p50/p99, beside the floor's)"

    /// The rows with local copies apart from etcd's data (`--cloud-state-directory`), beside the floor; empty
    /// without them.
    private static func apartEvidence(_ group: GroupResult, floor: ResultRow) -> String {
        let rows = [("library", "propagation.library-apart"), ("store", "propagation.store-apart")].compactMap {
            name, id in
            group.row(id).map { "\(name) \(Formatting.ratio($0.statistics.p50 / floor.statistics.p50))" }
        }
        return rows.isEmpty
            ? "" : "; with the local copies on another filesystem than etcd's data: " + rows.joined(separator: ", ")
    }

    /// Issue 31's "no worse than today", today measured in the same run: the library's ratio to the gRPC
    /// floor against the ratio the library had to its floor over the JSON gateway (its transport before).
    private static func noWorseThanTheGateway(_ group: GroupResult) -> TargetResult {
        guard let library = group.row("propagation.library"),
            let floor = group.row("propagation.grpc-txn-floor-watched"),
            let before = group.row("propagation.library-gateway"),
            let beforeFloor = group.row("propagation.txn-floor-watched"),
            floor.statistics.p50 > 0, beforeFloor.statistics.p50 > 0
        else {
            return TargetResult(
                target: propagationNoWorse, status: .notMeasured,
                evidence: group.row("propagation.library-gateway")?.note ?? "propagation rows missing")
        }
        let now = library.statistics.p50 / floor.statistics.p50
        let then = before.statistics.p50 / beforeFloor.statistics.p50
        // The observing process's CPU per change beside its floor's, over each transport.
        func cpu(_ id: String, beside floorID: String) -> String {
            guard let row = group.row(CloudBenchmarks.observerCPUID(id)),
                let floor = group.row(CloudBenchmarks.observerCPUID(floorID)), floor.statistics.p50 > 0
            else { return "" }
            return "; observer CPU per change \(Formatting.duration(row.statistics.p50)) vs the floor's "
                + "\(Formatting.duration(floor.statistics.p50)) = \(Formatting.ratio(row.statistics.p50 / floor.statistics.p50))"
        }
        return TargetResult(
            target: propagationNoWorse, status: now <= then ? .met : .notMet,
            evidence:
                "gRPC: library \(Formatting.duration(library.statistics.p50)) ÷ floor \(Formatting.duration(floor.statistics.p50)) = \(Formatting.ratio(now))"
                + cpu("propagation.library", beside: "propagation.grpc-txn-floor-watched") + "; "
                + "JSON gateway: library \(Formatting.duration(before.statistics.p50)) ÷ floor \(Formatting.duration(beforeFloor.statistics.p50)) = \(Formatting.ratio(then))"
                + cpu("propagation.library-gateway", beside: "propagation.txn-floor-watched"))
    }

    static func evaluate(_ group: GroupResult) -> [TargetResult] {
        func time(_ value: Double) -> String { Formatting.duration(value) }
        func reason(_ id: String, otherwise: String) -> String { group.rows.first { $0.id == id }?.note ?? otherwise }
        var results: [TargetResult] = []

        if let library = group.row("propagation.library"),
            let floor = group.row("propagation.grpc-txn-floor-watched"), floor.statistics.p50 > 0
        {
            let ratio = library.statistics.p50 / floor.statistics.p50
            // Where the library's time is: each end of it with the floor's other end.
            let ends = [("writing", "propagation.library-write"), ("observing", "propagation.library-observe")]
                .compactMap { end, id in
                    group.row(id).map { "the \(end) end \(Formatting.ratio($0.statistics.p50 / floor.statistics.p50))" }
                }
            results.append(
                TargetResult(
                    target: propagation, status: ratio <= 1.15 ? .met : .notMet,
                    evidence:
                        "p50 \(time(library.statistics.p50)) vs floor \(time(floor.statistics.p50)) = \(Formatting.ratio(ratio)); "
                        + "p99 \(time(library.statistics.p99)) vs \(time(floor.statistics.p99)) (\(library.statistics.count) and \(floor.statistics.count) samples)"
                        + (ends.isEmpty ? "" : "; " + ends.joined(separator: ", ") + " (the other end the floor's)")
                        + apartEvidence(group, floor: floor)
                ))
        } else {
            results.append(
                TargetResult(
                    target: propagation, status: .notMeasured,
                    evidence: reason("propagation.library", otherwise: "propagation rows missing")))
        }

        /// The library's propagation beside the floor `floorID` (no target), with `remark` after the ratio.
        func reportedBeside(_ target: String, floorID: String, remark: String = "") -> TargetResult {
            guard let library = group.row("propagation.library"), let floor = group.row(floorID),
                floor.statistics.p50 > 0
            else {
                return TargetResult(
                    target: target, status: .notMeasured,
                    evidence: reason(floorID, otherwise: "propagation rows missing"))
            }
            return TargetResult(
                target: target, status: .reported,
                evidence: "p50 \(time(library.statistics.p50)) vs \(time(floor.statistics.p50)) = "
                    + "\(Formatting.ratio(library.statistics.p50 / floor.statistics.p50))\(remark)")
        }
        results.append(reportedBeside(propagationGatewayFloor, floorID: "propagation.txn-floor-watched"))
        results.append(noWorseThanTheGateway(group))
        results.append(
            reportedBeside(
                propagationPutFloor, floorID: "propagation.floor",
                remark: " (a put is no compare-and-swap: the store cannot upload so)"))

        if let macro = group.row("read.cloud-macro"), let plain = group.row("read.plain"), plain.statistics.p50 > 0 {
            let ratio = macro.statistics.p50 / plain.statistics.p50
            results.append(
                TargetResult(
                    target: read, status: ratio <= 1.5 ? .met : .notMet,
                    evidence:
                        "\(time(macro.statistics.p50)) vs \(time(plain.statistics.p50)) = \(Formatting.ratio(ratio))"))
        } else {
            results.append(
                TargetResult(
                    target: read, status: .notMeasured,
                    evidence: reason("read.cloud-macro", otherwise: "read rows missing")))
        }

        if let library = group.row("fanout.library.all"), let floor = group.row("fanout.floor.all") {
            var evidence =
                "library p50 \(time(library.statistics.p50)), p99 \(time(library.statistics.p99)); "
                + "floor p50 \(time(floor.statistics.p50)), p99 \(time(floor.statistics.p99)) (all arrivals)"
            if let libraryLast = group.row("fanout.library.last"), let floorLast = group.row("fanout.floor.last") {
                evidence +=
                    "; last arrival per write p50 \(time(libraryLast.statistics.p50)) vs floor \(time(floorLast.statistics.p50))"
            }
            results.append(TargetResult(target: fanOut, status: .reported, evidence: evidence))
        } else {
            results.append(
                TargetResult(
                    target: fanOut, status: .notMeasured,
                    evidence: reason("fanout.library.all", otherwise: "fan-out rows missing")))
        }
        return results
    }
}
