import Foundation

/// Checks the targets of issue 5 against a run's rows. Nothing is assumed: a target whose rows are missing
/// is "not measured", with the reason.
enum Targets {
    static func evaluate(_ groups: [GroupResult]) -> [TargetResult] {
        func group(_ number: Int) -> GroupResult? { groups.first { $0.number == number } }
        func time(_ value: Double) -> String { Formatting.duration(value) }
        var results: [TargetResult] = []

        // Property read.
        if let reads = group(1) {
            let types = [("string", "String"), ("int", "Int"), ("enum", "enum"), ("codable", "Codable")]
            let macroRows = types.compactMap { type in reads.row("\(type.0).macro").map { (type, $0) } }
            if macroRows.count == types.count {
                var within2 = true, faster10 = true
                var plainParts: [String] = [], defaultsParts: [String] = []
                for ((id, name), macro) in macroRows {
                    guard let plain = reads.row("\(id).plain"), let defaults = reads.row("\(id).userdefaults") else {
                        continue
                    }
                    let ratio = macro.statistics.p50 / plain.statistics.p50
                    let speedup = defaults.statistics.p50 / macro.statistics.p50
                    within2 = within2 && ratio <= 2
                    faster10 = faster10 && speedup >= 10
                    plainParts.append(
                        "\(name) \(Formatting.ratio(ratio)) (\(time(macro.statistics.p50)) vs \(time(plain.statistics.p50)))"
                    )
                    defaultsParts.append("\(name) \(Formatting.ratio(speedup)) faster")
                }
                results.append(
                    TargetResult(
                        target: "Property read within 2× of plain `@Observable`", status: within2 ? .met : .notMet,
                        evidence: plainParts.joined(separator: "; ")))
                results.append(
                    TargetResult(
                        target: "Property read ≥ 10× faster than the `UserDefaults` read path",
                        status: faster10 ? .met : .notMet,
                        evidence: defaultsParts.joined(separator: "; ")))
            } else {
                let suiteParts = types.compactMap { id, name -> String? in
                    guard let suite = reads.row("\(id).suite"), let plain = reads.row("\(id).plain"),
                        let defaults = reads.row("\(id).userdefaults")
                    else { return nil }
                    return
                        "\(name): suite getter \(Formatting.ratio(suite.statistics.p50 / plain.statistics.p50)) of plain, "
                        + "UserDefaults \(Formatting.ratio(defaults.statistics.p50 / suite.statistics.p50)) of suite getter"
                }
                let reason =
                    "needs the `@ObservableDefaults` rows (macros not merged). For reference: "
                    + suiteParts.joined(separator: "; ")
                results.append(
                    TargetResult(
                        target: "Property read within 2× of plain `@Observable`", status: .notMeasured, evidence: reason
                    ))
                results.append(
                    TargetResult(
                        target: "Property read ≥ 10× faster than the `UserDefaults` read path", status: .notMeasured,
                        evidence: reason))
            }
        }

        if let writes = group(2) {
            results += WriteTargets.evaluate(writes)
        }

        // Cross-process latency.
        if let latency = group(4), let ours = latency.row("ours") {
            let stats = ours.statistics
            results.append(
                TargetResult(
                    target: "Cross-process p50 < 2 ms", status: stats.p50 < 2_000_000 ? .met : .notMet,
                    evidence: "p50 \(time(stats.p50)) over \(stats.count) samples"))
            results.append(
                TargetResult(
                    target: "Cross-process p99 < 10 ms", status: stats.p99 < 10_000_000 ? .met : .notMet,
                    evidence: "p99 \(time(stats.p99))"))
            if let floor = latency.row("floor") {
                let ratio50 = stats.p50 / floor.statistics.p50
                let ratio99 = stats.p99 / floor.statistics.p99
                results.append(
                    TargetResult(
                        target: "Cross-process within 3× of the inotify floor", status: ratio50 <= 3 ? .met : .notMet,
                        evidence:
                            "p50 \(time(stats.p50)) vs floor \(time(floor.statistics.p50)) = \(Formatting.ratio(ratio50)); "
                            + "p99 \(time(stats.p99)) vs \(time(floor.statistics.p99)) = \(Formatting.ratio(ratio99))"))
            }
        }

        // Fan-out.
        if let fanOut = group(3) {
            let variant = fanOut.row("n10.macro") != nil && fanOut.row("n1000.macro") != nil ? "macro" : "object"
            if let small = fanOut.row("n10.\(variant)"), let large = fanOut.row("n1000.\(variant)") {
                let ratio = large.statistics.p50 / small.statistics.p50
                let what =
                    variant == "macro"
                    ? "`@ObservableDefaults` class"
                    : "one observer per object dispatching to the changed property (the `@ObservableDefaults` N = 1,000 row was not measured: "
                        + (fanOut.rows.first { $0.id == "n1000.macro" }?.note ?? "macros not available") + ")"
                var evidence =
                    "\(what): \(time(large.statistics.p50)) vs \(time(small.statistics.p50)) = \(Formatting.ratio(ratio))"
                if variant != "macro", let macroSmall = fanOut.row("n10.macro"),
                    let macroMedium = fanOut.row("n100.macro")
                {
                    evidence +=
                        "; `@ObservableDefaults` N = 100 vs N = 10: \(time(macroMedium.statistics.p50)) vs \(time(macroSmall.statistics.p50)) = "
                        + Formatting.ratio(macroMedium.statistics.p50 / macroSmall.statistics.p50)
                }
                results.append(
                    TargetResult(
                        target: "Fan-out cost at N = 1,000 within 2× of N = 10", status: ratio <= 2 ? .met : .notMet,
                        evidence: evidence))
            } else {
                results.append(
                    TargetResult(
                        target: "Fan-out cost at N = 1,000 within 2× of N = 10", status: .notMeasured,
                        evidence: "N = 10 or 1,000 not run"))
            }
        }

        // Scale.
        if let scale = group(6) {
            if let load = scale.row("json.100000.load") {
                results.append(
                    TargetResult(
                        target: "100,000-key JSON suite loads in < 500 ms",
                        status: load.statistics.p50 < 500_000_000 ? .met : .notMet,
                        evidence:
                            "p50 \(time(load.statistics.p50)), p99 \(time(load.statistics.p99)) over \(load.statistics.count) loads"
                    ))
            } else {
                results.append(
                    TargetResult(
                        target: "100,000-key JSON suite loads in < 500 ms", status: .notMeasured,
                        evidence: "100,000-key suites are skipped in --quick"))
            }
        }
        if let cloud = group(CloudBenchmarks.number) {
            results.append(contentsOf: CloudTargets.evaluate(cloud))
        }
        if let fleet = group(FleetBenchmarks.number) {
            results.append(contentsOf: FleetTargets.evaluate(fleet))
        }
        if let compile = group(CompileTimeResults.number) {
            results.append(CompileTimeResults.target(compile))
        }
        return results
    }
}
