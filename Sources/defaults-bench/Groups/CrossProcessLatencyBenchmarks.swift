import Foundation
import ObservableDefaults

/// Group 4: a writer process sets a key; this process observes it. Beside it, the floor: the same
/// round trip with a raw write + rename in the writer and a raw inotify read here, no library code.
enum CrossProcessLatencyBenchmarks {
    static func run(_ context: BenchContext) -> GroupResult {
        var group = GroupResult(
            number: 4, title: "Cross-process latency",
            method:
                "A child process stamps `CLOCK_MONOTONIC` and writes it; this process records the arrival time when "
                + "its observer sees the stamp. One write in flight at a time (ping-pong over a pipe), so every sample "
                + "is one write and nothing is coalesced. Ours and the floor alternate in rounds within the same run.")
        let samples = context.settings.latencySamples
        let ours = LatencySide.library(context, label: "latency-library")
        let floor = LatencySide.raw(context, label: "latency-floor", paddingKeys: 0)
        LatencySide.interleave(
            [ours, floor], samples: samples, rounds: context.settings.quick ? 1 : 5, context: context,
            label: "4. cross-process")
        group.append(
            ours.finish(
                id: "ours", name: "ours: `DefaultsSuite.set` in the writer → `observe(keys:)` handler here",
                expected: samples))
        group.append(
            floor.finish(
                id: "floor", name: "floor: raw write + rename → raw inotify read + file read, no library code",
                expected: samples))
        group.relate("ours", to: "floor")
        group.notes.append(
            "The writer's stamp is taken before its write starts, so both rows include the writer's own write "
                + "(ours: lock, read-modify-write, encode, rename; floor: write + rename) and the observer's file read."
        )
        return group
    }
}

/// One side of a latency comparison: a writer child, an observer here, and the probe collecting samples.
final class LatencySide {
    let probe: LatencyProbe
    let child: ChildProcess
    /// The suite observed here (`nil` for the raw floor).
    let suite: DefaultsSuite?
    /// Runs before each write is requested (e.g. to arm one-shot Observation tracking).
    var beforeEachWrite: (() -> Void)?
    /// Kept alive until ``finish(id:name:expected:)`` (e.g. the observed object).
    var keepAlive: AnyObject?
    private let stopObserving: () -> Void
    private var dropped = 0

    private init(probe: LatencyProbe, child: ChildProcess, suite: DefaultsSuite? = nil, stop: @escaping () -> Void) {
        self.probe = probe
        self.suite = suite
        self.child = child
        self.stopObserving = stop
        guard child.waitForLine(startingWith: "ready") != nil else { fail("a writer child did not start") }
    }

    /// Library on both ends: the child writes through `DefaultsSuite`, this process observes with it.
    static func library(_ context: BenchContext, label: String) -> LatencySide {
        let file = context.directory(label).appendingPathComponent("settings.json")
        let suite = openSuite(file)
        suite.set(.integer(0), forKey: "stamp")
        let probe = LatencyProbe()
        let observation = suite.observe(keys: ["stamp"]) { change in
            guard change.origin == .outside, case .integer(let stamp)? = suite.storedValue(forKey: "stamp") else {
                return
            }
            probe.arrive(stamp: stamp)
        }
        return LatencySide(probe: probe, child: startChild(["writer", "library", file.path]), suite: suite) {
            observation.cancel()
        }
    }

    /// The observer of a hand-edit side: each outside change of `stamp` read through the suite arrives at
    /// `probe`.
    static func observingStamp(_ suite: DefaultsSuite, _ probe: LatencyProbe) -> DefaultsObservation {
        suite.observe(keys: ["stamp"]) { change in
            guard change.origin == .outside, let stamp = suite.value(Int.self, forKey: "stamp") else { return }
            probe.arrive(stamp: stamp)
        }
    }

    /// A raw rename-over writer child, observed by the library here (a hand edit by another process).
    /// `probeSetup` attaches what delivers stamps to the probe (it may return `nil` and use ``beforeEachWrite``).
    static func handEdit(
        _ context: BenchContext, label: String, paddingKeys: Int,
        probeSetup: (DefaultsSuite, LatencyProbe) -> DefaultsObservation?
    ) -> LatencySide {
        let file = context.directory(label).appendingPathComponent("settings.json")
        RawFile.renameOver(file.path, StampText.file(stamp: 0, paddingKeys: paddingKeys))
        let suite = openSuite(file)
        let probe = LatencyProbe()
        let observation = probeSetup(suite, probe)
        return LatencySide(
            probe: probe, child: startChild(["writer", "raw", file.path, String(paddingKeys)]), suite: suite
        ) { observation?.cancel() }
    }

    /// A raw rename-over writer child saving a *system layer* file (`$XDG_CONFIG_DIRS/observable-defaults/`),
    /// observed by the library here through a suite whose own file does not hold the key: the layer path.
    /// `suite` must read through `systemFile`'s layer (opened with the places set).
    static func systemLayer(
        suite: DefaultsSuite, systemFile: URL, paddingKeys: Int
    ) -> LatencySide {
        RawFile.renameOver(systemFile.path, StampText.file(stamp: 0, paddingKeys: paddingKeys))
        suite.reload()
        let probe = LatencyProbe()
        let observation = suite.observe(keys: ["stamp"]) { change in
            guard change.layer != nil, let stamp = suite.value(Int.self, forKey: "stamp") else { return }
            probe.arrive(stamp: stamp)
        }
        return LatencySide(
            probe: probe, child: startChild(["writer", "raw", systemFile.path, String(paddingKeys)]), suite: suite
        ) { observation.cancel() }
    }

    /// No library code: a raw rename-over writer child and a raw inotify reader here.
    static func raw(_ context: BenchContext, label: String, paddingKeys: Int) -> LatencySide {
        let directory = context.directory(label)
        let file = directory.appendingPathComponent("settings.json")
        let probe = LatencyProbe()
        let observer = RawInotifyObserver(directory: directory.path, fileName: file.lastPathComponent, probe: probe)
        return LatencySide(probe: probe, child: startChild(["writer", "raw", file.path, String(paddingKeys)])) {
            observer.stop()
        }
    }

    private static func startChild(_ arguments: [String]) -> ChildProcess {
        do { return try ChildProcess(arguments) } catch { fail("cannot start a child: \(error)") }
    }

    /// Takes `count` ping-pong samples.
    func sample(_ count: Int) {
        for _ in 0..<count {
            beforeEachWrite?()
            child.send("w")
            if !probe.waitForArrival() { dropped += 1 }
        }
    }

    /// Warms every side up, then samples them in alternating rounds so machine noise hits all sides alike.
    static func interleave(_ sides: [LatencySide], samples: Int, rounds: Int, context: BenchContext, label: String) {
        for side in sides {
            side.sample(max(5, samples / 20))
            side.probe.reset()
            side.dropped = 0
        }
        for round in 0..<rounds {
            context.progress("\(label): round \(round + 1)/\(rounds)")
            let chunk = samples / rounds + (round < samples % rounds ? 1 : 0)
            for side in round % 2 == 0 ? sides : sides.reversed() { side.sample(chunk) }
        }
    }

    /// Stops the child and the observer and returns the row.
    func finish(id: String, name: String, expected: Int) -> ResultRow {
        child.closeInput()
        child.wait()
        stopObserving()
        keepAlive = nil
        let samples = probe.samples
        var notes: [String] = []
        if samples.count != expected { notes.append("\(samples.count) of \(expected) samples arrived") }
        if dropped > 0 { notes.append("\(dropped) waits timed out (2 s)") }
        return ResultRow(
            id: id, name: name, statistics: Statistics(samples),
            note: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }
}
