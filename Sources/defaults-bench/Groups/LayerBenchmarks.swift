import Foundation
import ObservableDefaults
import Synchronization

/// Group 10: the search list (issue 33). A property read with every default layer present against a plain
/// `@Observable` property; a change saved in a lower layer (a system file) against the same save of the
/// suite's own file; a saved system-file change of a key the suite's file shadows against one of a key it
/// does not; opening a suite with the standard layers (their files absent; the global domain's file present)
/// against a suite of one file.
enum LayerBenchmarks {
    static let number = 10

    static func run(_ context: BenchContext) -> GroupResult {
        var group = GroupResult(
            number: number, title: "Layers",
            method:
                "The layers' places (`OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY`, `XDG_CONFIG_DIRS`, the suites directory "
                + "holding the global domain) point at scratch directories while the group opens its suites. Reads "
                + "and opens are sampled interleaved (round-robin batches); latencies are ping-pong with a raw "
                + "rename-over writer child in alternating rounds, as in group 5.")
        let root = context.directory("layers")
        let managed = root.appendingPathComponent("managed", isDirectory: true)
        let xdg = root.appendingPathComponent("xdg", isDirectory: true)
        let system = xdg.appendingPathComponent("observable-defaults", isDirectory: true)
        let suites = root.appendingPathComponent("suites", isDirectory: true)
        for directory in [managed, system, suites] {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let names = ["OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY", "XDG_CONFIG_DIRS", "OBSERVABLE_DEFAULTS_DIRECTORY"]
        let saved = names.map { name -> (String, String?) in (name, getenv(name).map { String(cString: $0) }) }
        setenv("OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY", managed.path, 1)
        setenv("XDG_CONFIG_DIRS", xdg.path, 1)
        setenv("OBSERVABLE_DEFAULTS_DIRECTORY", suites.path, 1)
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }

        measureRead(context, &group, managed: managed, system: system, suites: suites)
        measureOpen(context, &group, suites: suites)
        measureLatency(context, &group, system: system, suites: suites)
        measureShadowed(context, &group, system: system, suites: suites)
        return group
    }

    /// `1.x`: the Int property of an object whose suite has a managed, a system and a global file (none with
    /// its key), against a plain `@Observable` property.
    private static func measureRead(
        _ context: BenchContext, _ group: inout GroupResult, managed: URL, system: URL, suites: URL
    ) {
        context.progress("10. layers: property read")
        let write = { (url: URL, text: String) in _ = RawFile.renameOver(url.path, Array(text.utf8)) }
        write(managed.appendingPathComponent("layered-read.json"), #"{"forced": 1}"#)
        write(system.appendingPathComponent("layered-read.json"), #"{"name": "system", "shipped": 2}"#)
        write(suites.appendingPathComponent("NSGlobalDomain.json"), #"{"locale": "fr"}"#)
        let suite = openSuite(suites.appendingPathComponent("layered-read.json"))
        let object = opaque(MacroSettings(userDefaults: suite))
        object.count = 42
        let plain = opaque(PlainSettings())
        let statistics = Sampler.interleaved(
            context.settings,
            [
                Sampler.Candidate(body: { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= plain.count }
                    return sum
                }),
                Sampler.Candidate(body: { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= object.count }
                    return sum
                })
            ])
        group.append(ResultRow(id: "read.plain", name: "Int: plain `@Observable`", statistics: statistics[0]))
        group.append(
            ResultRow(
                id: "read.layers",
                name: "Int: `@ObservableDefaults` property, managed, system and global files present",
                statistics: statistics[1]))
        group.relate("read.layers", to: "read.plain")
        withExtendedLifetime(object) {}
    }

    /// `open.x`: opening a suite (its file absent) with the standard layers, their files absent, against a
    /// suite of one file; then the same pair with the global domain's file present (the read row wrote it),
    /// as `open.x-global`. Each pair is sampled interleaved; the global file is moved aside for the first.
    private static func measureOpen(_ context: BenchContext, _ group: inout GroupResult, suites: URL) {
        context.progress("10. layers: open")
        let global = suites.appendingPathComponent(DefaultsSuite.globalDomain + ".json").path
        let aside = global + ".aside"
        var counter = 0
        func open(_ layers: [DefaultsLayer]) -> Int {
            counter += 1
            let url = suites.appendingPathComponent("open-\(counter).json")
            do {
                return try DefaultsSuite(fileURL: url, layers: layers).name.utf8.count
            } catch {
                fail("cannot open \(url.path): \(error)")
            }
        }
        func pair() -> [Statistics] {
            Sampler.interleaved(
                context.settings,
                [[.file], DefaultsLayer.standard].map { layers in
                    Sampler.Candidate(
                        maxBatch: 4096,
                        body: { n in
                            var sum = 0
                            for _ in 0..<n { sum &+= open(layers) }
                            return sum
                        })
                })
        }
        guard rename(global, aside) == 0 else { fail("cannot move \(global) aside: errno \(errno)") }
        let absent = pair()
        guard rename(aside, global) == 0 else { fail("cannot move \(global) back: errno \(errno)") }
        let present = pair()
        group.append(ResultRow(id: "open.file", name: "open: the file only (`layers: [.file]`)", statistics: absent[0]))
        group.append(
            ResultRow(
                id: "open.standard", name: "open: `DefaultsLayer.standard`, managed, system and global files absent",
                statistics: absent[1]))
        group.relate("open.standard", to: "open.file")
        group.append(
            ResultRow(
                id: "open.file-global", name: "open: the file only, sampled beside the next row",
                statistics: present[0]))
        group.append(
            ResultRow(
                id: "open.standard-global",
                name: "open: `DefaultsLayer.standard`, managed and system files absent, the global domain's present",
                statistics: present[1]))
        group.relate("open.standard-global", to: "open.file-global")
    }

    /// `latency.x`: a change saved in a system file reaching a `DefaultsSuite.observe(keys:)` handler,
    /// against the same save of the suite's own file (group 5's path).
    private static func measureLatency(
        _ context: BenchContext, _ group: inout GroupResult, system: URL, suites: URL
    ) {
        let paddingKeys = HandEditLatencyBenchmarks.paddingKeys
        let samples = context.settings.latencySamples
        let fileSide = LatencySide.handEdit(
            context, label: "layers-file", paddingKeys: paddingKeys,
            probeSetup: LatencySide.observingStamp)
        let layered = openSuite(suites.appendingPathComponent("layered-latency.json"))
        let layerSide = LatencySide.systemLayer(
            suite: layered, systemFile: system.appendingPathComponent("layered-latency.json"), paddingKeys: paddingKeys)
        LatencySide.interleave(
            [fileSide, layerSide], samples: samples, rounds: context.settings.quick ? 1 : 5, context: context,
            label: "10. layers: latency")
        group.append(
            fileSide.finish(
                id: "latency.file", name: "the suite's own file saved: `observe(keys:)` handler sees the value",
                expected: samples))
        group.append(
            layerSide.finish(
                id: "latency.system", name: "a system file saved (the suite's file without the key): the same",
                expected: samples))
        group.relate("latency.system", to: "latency.file")
    }

    /// `change.x`: a system file saved with a new value of one key, then `reload()`, on a suite with an
    /// `.allProcesses` observer of the key (so its watcher reads the file too, as in an app): the key absent
    /// from the suite's file (the change is visible: one read, one diff, one notification) against the key
    /// held by the suite's file (shadowed: one read, one diff, nobody told). The shadowed side counts the
    /// notifications it gets: any is a failure.
    private static func measureShadowed(
        _ context: BenchContext, _ group: inout GroupResult, system: URL, suites: URL
    ) {
        context.progress("10. layers: shadowed change")
        let heard = (visible: NotificationCount(), shadowed: NotificationCount())
        func side(
            _ name: String, shadowed: Bool, _ count: NotificationCount
        ) -> (DefaultsSuite, DefaultsObservation, Sampler.Candidate) {
            let systemFile = system.appendingPathComponent(name + ".json").path
            let padding = String(repeating: "x", count: 64)
            let versions = (0..<2).map { Array("{\"level\": \($0), \"padding\": \"\(padding)\"}".utf8) }
            _ = RawFile.renameOver(systemFile, versions[1])
            let suite = openSuite(suites.appendingPathComponent(name + ".json"))
            if shadowed { suite.set(7, forKey: "level") }
            let observation = suite.observe(keys: ["level"], scope: .allProcesses) { _ in count.add() }
            var next = 0
            let candidate = Sampler.Candidate(
                maxBatch: 4096,
                body: { n in
                    for _ in 0..<n {
                        _ = RawFile.renameOver(systemFile, versions[next])
                        next ^= 1
                        suite.reload()
                    }
                    return suite.integer(forKey: "level")
                })
            return (suite, observation, candidate)
        }
        let visible = side("change-visible", shadowed: false, heard.visible)
        let shadowed = side("change-shadowed", shadowed: true, heard.shadowed)
        let statistics = Sampler.interleaved(context.settings, [visible.2, shadowed.2])
        visible.1.cancel()
        shadowed.1.cancel()
        if heard.shadowed.value != 0 {
            fail("a shadowed system-file change notified the observer \(heard.shadowed.value) times")
        }
        group.append(
            ResultRow(
                id: "change.visible",
                name: "a system file saved, then `reload()`: a key the suite's file lacks (observer notified)",
                statistics: statistics[0]))
        group.append(
            ResultRow(
                id: "change.shadowed",
                name: "the same, a key the suite's file holds (shadowed: one diff, nobody notified)",
                statistics: statistics[1]))
        group.relate("change.shadowed", to: "change.visible")
        group.notes.append(
            "Shadowed change: \(heard.visible.value) notifications on the visible side, \(heard.shadowed.value) on "
                + "the shadowed side (the save and the read are in both rows; the watcher may read a save first, "
                + "then `reload()` finds nothing new).")
        withExtendedLifetime((visible.0, shadowed.0)) {}
    }
}

/// How many times an observer was called.
private final class NotificationCount: Sendable {
    private let count = Mutex(0)

    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
