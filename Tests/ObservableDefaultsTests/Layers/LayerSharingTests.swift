import Dispatch
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// One watch per layer file per process, shared by the suites watching it; what the process keeps of its
/// layer directories between opens; and nothing left behind when the suites go.
@Suite struct LayerSharingTests {
    let layers = LayerFixture()

    /// The shared watches alive on layer files under this test's directory.
    private var fixtureWatchers: [LayerWatch] {
        LayerWatch.live.filter { watch in
            guard case .file(let file) = watch.key else { return false }
            return file.directory.path.hasPrefix(layers.directory.path)
        }
    }

    /// The shared watch of `file` in `directory`, if one is alive.
    private func watch(_ role: LayerFile.Role, _ name: String, in directory: URL) -> LayerWatch? {
        let key = LayerFile.Key(role: role, directory: LayerDirectory(directory.path), name: name)
        return LayerWatch.live.first { $0.key == .file(key) }
    }

    /// The shared watcher's registrations and watched directories under this test's directory.
    private var fixtureWatches: (registrations: Int, directories: Int) {
        let root = layers.directory.path
        let registrations = FileWatcher.shared.state.withLock { state in
            state.registrations.values.filter { $0.file.hasPrefix(root) }.count
        }
        return (registrations, FileWatcher.shared.watchedDirectories.filter { $0.hasPrefix(root) }.count)
    }

    @Test func suitesWatchingTheSameLayerFilesShareOneWatchPerFile() throws {
        let first = try layers.suite("shared")
        let second = try layers.suite("shared")
        #expect(first.storage !== second.storage, "the fixture opens a storage of its own each time")
        #expect(fixtureWatchers.isEmpty, "a suite that is not watched holds nothing shared")

        let observations = [first, second].map { $0.observe(scope: .allProcesses) { _ in } }
        defer { observations.forEach { $0.cancel() } }
        #expect(fixtureWatchers.count == 4, "managed, two system files, global")
        #expect(fixtureWatchers.allSatisfy { $0.subscriberCount == 2 })

        // Another suite shares the global domain's watch, not those of the files named after it.
        let other = try layers.suite("other")
        let observation = other.observe(scope: .allProcesses) { _ in }
        defer { observation.cancel() }
        #expect(fixtureWatchers.count == 7)
        #expect(watch(.global, DefaultsSuite.globalDomain, in: layers.global)?.subscriberCount == 3)
        #expect(watch(.managed, "shared", in: layers.managed)?.subscriberCount == 2)
        #expect(watch(.managed, "other", in: layers.managed)?.subscriberCount == 1)

        // Other places: other files, other watches, whatever the suite's name.
        let elsewhere = LayerFixture()
        let moved = try elsewhere.suite("shared")
        let movedObservation = moved.observe(scope: .allProcesses) { _ in }
        defer { movedObservation.cancel() }
        #expect(watch(.system, "shared", in: elsewhere.system[0])?.subscriberCount == 1)
        #expect(watch(.system, "shared", in: layers.system[0])?.subscriberCount == 2)
    }

    @Test func theGlobalDomainsOwnSuiteDoesNotReadItselfAsALayer() throws {
        let global = try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        let own = try SuiteStorage(
            fileURL: global, format: .json, layers: DefaultsLayer.standard, places: layers.places)
        #expect(own.layerSources.count == 4, "managed, arguments and two system directories")
        #expect(own.value(forKey: "locale") == .string("fr"))
    }

    @Test func twoSuitesOpenedUnderDifferentPlacesReadTheirOwnFiles() throws {
        let elsewhere = LayerFixture()
        try layers.write(#"{"port": 1}"#, "placed", in: layers.system[0])
        try elsewhere.write(#"{"port": 2}"#, "placed", in: elsewhere.system[0])
        let here = try layers.suite("placed")
        let there = try elsewhere.suite("placed")
        #expect(here.value(forKey: "port") == .integer(1) && there.value(forKey: "port") == .integer(2))
        #expect(here.origin(forKey: "port") == .system(layers.system[0].appendingPathComponent("placed.json")))
    }

    @Test func aLayerFileChangeReachesEveryWatchingSuiteAndABrokenOneEachErrorChannel() throws {
        let system = try layers.write(#"{"port": 80}"#, "fan", in: layers.system[0])
        let global = try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        let suites = try [layers.suite("fan"), layers.suite("fan"), layers.suite("fan-other")]
        let changes = suites.map { _ in ChangeRecorder() }
        let errors = suites.map { _ in ErrorEventRecorder() }
        var observations: [DefaultsObservation] = []
        for (index, suite) in suites.enumerated() {
            observations.append(suite.observe(scope: .allProcesses) { changes[index].record($0) })
            observations.append(suite.observeErrorEvents { errors[index].record($0) })
        }
        defer { observations.forEach { $0.cancel() } }
        #expect(watch(.system, "fan", in: layers.system[0])?.subscriberCount == 2)
        #expect(watch(.global, DefaultsSuite.globalDomain, in: layers.global)?.subscriberCount == 3)
        #expect(fixtureWatches.registrations == 3 + 2 * 7, "each suite's file, then json and plist of 7 layer files")

        try HandEdit.renameOver(global, #"{"locale": "de"}"#)
        for (suite, recorder) in zip(suites, changes) {
            #expect(recorder.waitFor(key: "locale"))
            #expect(
                recorder.changes.first == DefaultsChange(keys: ["locale"], origin: .outside, layer: .global(global)))
            #expect(suite.value(forKey: "locale") == .string("de"))
        }

        try HandEdit.truncateAndWrite(system, "{\n  \"port\":\n}")
        for index in 0..<2 {
            #expect(eventually { errors[index].items.contains { $0.error.kind == .malformedFile } })
            let error = try #require(errors[index].items.first { $0.error.kind == .malformedFile }?.error)
            #expect(error.fileURL == system && error.line == 3 && error.column != nil, "\(error)")
            #expect(suites[index].value(forKey: "port") == .integer(80), "the last good value")
        }
        try HandEdit.renameOver(system, #"{"port": 81}"#)
        for index in 0..<2 {
            #expect(eventually { suites[index].value(forKey: "port") == .integer(81) })
            #expect(eventually { suites[index].currentErrors.isEmpty })
        }
        #expect(!errors[2].items.contains { $0.error.kind == .malformedFile }, "not its file")
        #expect(suites[2].value(forKey: "port") == nil)
    }

    @Test func aReleasedSuitesSourcesAndWatchesGoAwayWithTheLastUser() throws {
        try layers.write(#"{"port": 80}"#, "released", in: layers.system[0])
        do {
            let watched = try layers.suite("released")
            let plain = try layers.suite("released")
            let observation = watched.observe(scope: .allProcesses) { _ in }
            #expect(fixtureWatchers.count == 4, "managed, two system files, global")
            #expect(fixtureWatches.registrations == 1 + 2 * 4)
            #expect(fixtureWatches.directories > 0)
            observation.cancel()
            #expect(fixtureWatches.registrations == 0, "an unwatched suite keeps no watch")
            #expect(fixtureWatchers.isEmpty)

            _ = watched.observe(scope: .allProcesses) { _ in }  // released at once: watching stops again
            let again = watched.observe(scope: .allProcesses) { _ in }
            withExtendedLifetime((watched, plain, again)) {}
        }
        #expect(eventually { fixtureWatchers.isEmpty }, "\(fixtureWatchers.map(\.key))")
        #expect(eventually { fixtureWatches == (0, 0) }, "\(fixtureWatches)")
    }

    @Test func aSuiteReleasedWhileStillWatchedLeavesNoWatchBehind() throws {
        // Its own file is broken and a change waits for it to parse: the suite is watched with no observer,
        // so it goes while watched.
        try layers.write("{ \"broken\": ", "pending", in: layers.suites)
        do {
            let suite = try layers.suite("pending")
            suite.set(1, forKey: "waiting")
            let watched = suite.storage.layersWatched.load(ordering: .acquiring)
            #expect(watched)
            #expect(fixtureWatchers.count == 4)
            #expect(fixtureWatches.registrations == 1 + 2 * 4)
        }
        #expect(eventually { fixtureWatchers.isEmpty }, "\(fixtureWatchers.map(\.key))")
        #expect(eventually { fixtureWatches == (0, 0) }, "\(fixtureWatches)")
    }

    @Test func suitesOpenedAndReleasedConcurrentlyShareSafely() throws {
        let names = ["c0", "c1", "c2"]
        for (index, name) in names.enumerated() {
            try layers.write(#"{"port": \#(index)}"#, name, in: layers.system[1])
        }
        try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        let keeper = try layers.suite("c0")
        let changes = ChangeRecorder()
        let observation = keeper.observe(scope: .allProcesses) { changes.record($0) }
        defer { observation.cancel() }

        let wrong = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<60 {
                let index = (thread + round) % names.count
                do {
                    let suite = try layers.suite(names[index])
                    var token: DefaultsObservation?
                    if round % 3 == 0 { token = suite.observe(scope: .allProcesses) { _ in } }
                    if suite.value(forKey: "port") != .integer(index) || suite.value(forKey: "locale") != .string("fr")
                    {
                        wrong.withLock { $0.append("\(names[index]): \(suite.dictionaryRepresentation())") }
                    }
                    if round % 6 == 0 { token?.cancel() }  // else released with the suite
                } catch {
                    wrong.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(wrong.withLock { $0 }.isEmpty, "\(wrong.withLock { $0.prefix(5) })")

        // The suite that lived through it still hears its files.
        #expect(eventually { fixtureWatchers.count == 4 }, "\(fixtureWatchers.map(\.key))")
        #expect(fixtureWatchers.allSatisfy { $0.subscriberCount == 1 }, "the suite that lived through it")
        #expect(eventually { fixtureWatches.registrations == 1 + 2 * 4 }, "\(fixtureWatches)")
        try layers.write(#"{"port": 10}"#, "c0", in: layers.system[1])
        #expect(changes.waitFor(key: "port"))
        #expect(keeper.value(forKey: "port") == .integer(10))
    }

    @Test func openingSeesEveryChangeMadeBeforeIt() throws {
        // Same size, written in place, within the same clock tick: only an event tells it from the last read.
        let global = try layers.write(#"{"locale": "fr"}"#, DefaultsSuite.globalDomain, in: layers.global)
        for _ in 0..<2 { #expect(try layers.suite("seen").value(forKey: "locale") == .string("fr")) }
        try HandEdit.truncateAndWrite(global, #"{"locale": "de"}"#)
        #expect(try layers.suite("seen").value(forKey: "locale") == .string("de"))

        // Its mode: a system file others may write is not trusted any more.
        let system = try layers.write(#"{"port": 80}"#, "seen", in: layers.system[0])
        #expect(try layers.suite("seen").value(forKey: "port") == .integer(80))
        #expect(chmod(system.path, 0o666) == 0)
        let untrusted = try layers.suite("seen")
        #expect(untrusted.value(forKey: "port") == nil)
        #expect(untrusted.currentErrors.first?.kind == .untrustedFile)
        #expect(chmod(system.path, 0o644) == 0)
        #expect(try layers.suite("seen").value(forKey: "port") == .integer(80))

        // A broken file is reported to every suite that opens on it, with its position.
        try HandEdit.renameOver(system, "{\n  \"port\": ,\n}")
        for _ in 0..<2 {
            let suite = try layers.suite("seen")
            let error = try #require(suite.currentErrors.first)
            #expect(error.kind == .malformedFile && error.fileURL == system && error.line == 2, "\(error)")
        }
        try FileManager.default.removeItem(at: system)
        #expect(try layers.suite("seen").currentErrors.isEmpty)
    }

    @Test func aSymlinkedOrHardLinkedLayerFileIsReadAtEveryOpen() throws {
        // Written where no event reaches the layer directory's watch: the target of a symlink, another link.
        let elsewhere = layers.directory.file("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let target = try layers.write(#"{"port": 1}"#, "target", in: elsewhere)
        try FileManager.default.createSymbolicLink(
            at: layers.system[0].appendingPathComponent("linked.json"), withDestinationURL: target)
        // Opened twice: the first open lists the directory, the second reads under the listing.
        for _ in 0..<2 { #expect(try layers.suite("linked").value(forKey: "port") == .integer(1)) }
        try HandEdit.truncateAndWrite(target, #"{"port": 2}"#)
        #expect(try layers.suite("linked").value(forKey: "port") == .integer(2))

        let original = try layers.write(#"{"port": 3}"#, "other", in: elsewhere)
        #expect(link(original.path, layers.managed.appendingPathComponent("hard.json").path) == 0)
        for _ in 0..<2 { #expect(try layers.suite("hard").value(forKey: "port") == .integer(3)) }
        try HandEdit.truncateAndWrite(original, #"{"port": 4}"#)
        #expect(try layers.suite("hard").value(forKey: "port") == .integer(4))
    }
}
