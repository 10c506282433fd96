import Foundation

/// The write targets of issue 12 (rows 1 and 2), each with the floor measured in the same run: a target
/// below its floor is judged against the floor too.
enum WriteTargets {
    static func evaluate(_ writes: GroupResult) -> [TargetResult] {
        func time(_ value: Double) -> String { Formatting.duration(value) }
        func ratio(_ id: String, _ reference: String) -> Double? {
            guard let row = writes.row(id), let base = writes.row(reference), base.statistics.p50 > 0 else {
                return nil
            }
            return row.statistics.p50 / base.statistics.p50
        }
        var results: [TargetResult] = []

        let inMemory = "Issue 12: in-memory part of a property write ≤ 3× plain `@Observable`"
        if let macro = writes.row("macro.batch"), let plain = writes.row("plain"),
            let ours = ratio("macro.batch", "plain")
        {
            var evidence = "\(time(macro.statistics.p50)) vs \(time(plain.statistics.p50)) = \(Formatting.ratio(ours))"
            if let floor = writes.row(WriteFloors.memoryID), let floorRatio = ratio(WriteFloors.memoryID, "plain") {
                evidence +=
                    "; floor (plain write + one `Mutex`-guarded dictionary update) \(time(floor.statistics.p50)) = "
                    + "\(Formatting.ratio(floorRatio)); ours ÷ floor \(Formatting.ratio(ours / floorRatio))"
            }
            if let copyRatio = ratio(WriteFloors.copyID, "plain") {
                evidence +=
                    "; with the property's own copy behind its lock \(Formatting.ratio(copyRatio)), "
                    + "ours ÷ that \(Formatting.ratio(ours / copyRatio))"
            }
            results.append(TargetResult(target: inMemory, status: ours <= 3 ? .met : .notMet, evidence: evidence))
        } else {
            results.append(
                TargetResult(
                    target: inMemory, status: .notMeasured, evidence: "the `macro.batch` or `plain` row is missing"))
        }

        let watched = "Issue 12: write-through `set` on a watched suite ≤ 1.05× unwatched"
        if let ours = ratio("suite.watched", "suite.writethrough") {
            var evidence = "\(Formatting.ratio(ours))"
            for variant in WriteFloors.saveVariants {
                if let floor = ratio(variant.watchedID, variant.unwatchedID) {
                    evidence += "; floor, \(variant.description), watched ÷ unwatched \(Formatting.ratio(floor))"
                }
            }
            if let checked = ratio(WriteFloors.checkedWatchID, WriteFloors.saveVariants[0].unwatchedID) {
                evidence +=
                    "; floor, the same raw save watched by a reader that `stat`s the file at each event on its name "
                    + "(the least a watcher does to tell its own save from another's), watched ÷ unwatched \(Formatting.ratio(checked))"
            }
            results.append(TargetResult(target: watched, status: ours <= 1.05 ? .met : .notMet, evidence: evidence))
        } else {
            results.append(
                TargetResult(
                    target: watched, status: .notMeasured,
                    evidence: "the `suite.watched` or `suite.writethrough` row is missing"))
        }
        let floorID = WriteFloors.saveVariants[0].unwatchedID
        for (id, target) in [
            ("suite.writethrough", "Issue 32: write-through `set` ≤ 1.2× the raw save floor"),
            (
                "suite.handformatted",
                "Issue 32: write-through `set` on a file laid out by hand with comments ≤ 1.2× the raw save floor"
            )
        ] {
            if let ours = ratio(id, floorID), let row = writes.row(id), let floor = writes.row(floorID) {
                results.append(
                    TargetResult(
                        target: target, status: ours <= 1.2 ? .met : .notMet,
                        evidence:
                            "\(time(row.statistics.p50)) vs \(time(floor.statistics.p50)) = \(Formatting.ratio(ours))"))
            } else {
                results.append(
                    TargetResult(
                        target: target, status: .notMeasured, evidence: "the `\(id)` or `\(floorID)` row is missing"))
            }
        }
        return results
    }
}
