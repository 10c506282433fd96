import Foundation
import ObservableDefaults

/// Group 5: another process saves the file the way an editor does (write a temporary file, rename it over
/// the suite), and this process waits until it sees the new value.
enum HandEditLatencyBenchmarks {
    static let paddingKeys = 10

    static func run(_ context: BenchContext) -> GroupResult {
        var group = GroupResult(
            number: 5, title: "Hand-edit latency",
            method:
                "A child process (no library code) stamps `CLOCK_MONOTONIC`, writes an \(paddingKeys + 1)-key JSON settings "
                + "file to a temporary file and renames it over the suite; this process records when the new value is "
                + "visible. Ping-pong, alternating rounds, as in group 4.")
        let samples = context.settings.latencySamples
        let suiteSide = LatencySide.handEdit(
            context, label: "handedit-suite", paddingKeys: paddingKeys,
            probeSetup: LatencySide.observingStamp)
        let macroSide = MacroRows.handEditSide(context, paddingKeys: paddingKeys)
        let floor = LatencySide.raw(context, label: "handedit-floor", paddingKeys: paddingKeys)
        LatencySide.interleave(
            [suiteSide] + (macroSide.map { [$0] } ?? []) + [floor], samples: samples,
            rounds: context.settings.quick ? 1 : 5, context: context, label: "5. hand edit")
        group.append(
            suiteSide.finish(
                id: "suite", name: "ours: `DefaultsSuite.observe(keys:)` handler sees the new value", expected: samples)
        )
        if let macroSide {
            group.append(
                macroSide.finish(
                    id: "macro", name: "ours: `@ObservableDefaults` property changes (Observation `onChange`)",
                    expected: samples))
        } else {
            group.append(contentsOf: MacroRows.missingHandEditRows())
        }
        group.append(
            floor.finish(id: "floor", name: "floor: raw inotify read + file read, no library code", expected: samples))
        group.relate("suite", to: "floor")
        group.relate("macro", to: "floor")
        return group
    }
}
