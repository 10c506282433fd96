import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A person edits the file with a text editor: each way editors save must deliver exactly the changed
/// keys, once, and saving an unchanged file must deliver nothing.
@Suite struct HandEditTests {
    let directory = TemporaryDirectory()

    static let original = #"{ "host": "localhost", "port": 8080, "level": "info" }"#
    static let edited = #"{ "host": "example.org", "port": 8080, "level": "info", "added": true }"#
    static let withMarker = #"{ "host": "example.org", "port": 8080, "level": "info", "added": true, "marker": 1 }"#

    enum Save: String, CaseIterable, CustomTestStringConvertible {
        case renameOver, truncateAndWrite, deleteAndRecreate
        var testDescription: String { rawValue }

        func perform(_ url: URL, _ contents: String) throws {
            switch self {
            case .renameOver: try HandEdit.renameOver(url, contents)
            case .truncateAndWrite: try HandEdit.truncateAndWrite(url, contents)
            case .deleteAndRecreate: try HandEdit.deleteAndRecreate(url, contents)
            }
        }
    }

    private func makeSuite(_ name: String) throws -> (DefaultsSuite, ChangeRecorder, DefaultsObservation) {
        let file = directory.file("\(name).json")
        try Data(Self.original.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        return (suite, recorder, observation)
    }

    @Test(arguments: Save.allCases)
    func editDeliversExactlyTheChangedKeysOnce(save: Save) throws {
        let (suite, recorder, observation) = try makeSuite("edit-\(save.rawValue)")
        defer { observation.cancel() }

        try save.perform(suite.fileURL, Self.edited)
        #expect(recorder.waitFor(key: "added"))
        try HandEdit.renameOver(suite.fileURL, Self.withMarker)
        #expect(recorder.waitFor(key: "marker"))

        #expect(recorder.changes(before: "marker") == [DefaultsChange(keys: ["host", "added"], origin: .outside)])
        #expect(suite.string(forKey: "host") == "example.org")
        #expect(suite.bool(forKey: "added"))
    }

    @Test(arguments: Save.allCases)
    func savingAnUnchangedFileDeliversNothing(save: Save) throws {
        let (suite, recorder, observation) = try makeSuite("unchanged-\(save.rawValue)")
        defer { observation.cancel() }

        // Same values, different bytes (spacing and key order), the way an editor rewrites a file.
        try save.perform(suite.fileURL, #"{"level":"info","port":8080,"host":"localhost"}"#)
        try HandEdit.renameOver(suite.fileURL, #"{"level":"info","port":8080,"host":"localhost","marker":1}"#)
        #expect(recorder.waitFor(key: "marker"))
        #expect(recorder.changes(before: "marker").isEmpty)
    }

    @Test func deletingTheFileRemovesEveryKey() throws {
        let (suite, recorder, observation) = try makeSuite("deleted")
        defer { observation.cancel() }
        try FileManager.default.removeItem(at: suite.fileURL)
        #expect(recorder.waitFor(key: "host"))
        #expect(recorder.changes == [DefaultsChange(keys: ["host", "port", "level"], origin: .outside)])
        #expect(suite.storedKeys.isEmpty)
    }

    /// The Kubernetes ConfigMap layout: `app.json -> ..data/app.json`, `..data -> ..2024_01`; an update
    /// creates a new timestamped directory and renames a new `..data` symlink over the old one.
    @Test func configMapSymlinkSwapIsSeen() throws {
        let root = directory.url.path
        func makeVersion(_ name: String, _ contents: String) throws {
            try FileManager.default.createDirectory(atPath: "\(root)/\(name)", withIntermediateDirectories: false)
            try Data(contents.utf8).write(to: URL(fileURLWithPath: "\(root)/\(name)/app.json"))
        }
        try makeVersion("..2024_01", Self.original)
        #expect(symlink("..2024_01", "\(root)/..data") == 0)
        #expect(symlink("..data/app.json", "\(root)/app.json") == 0)

        let suite = try DefaultsSuite(fileURL: directory.file("app.json"))
        #expect(suite.string(forKey: "host") == "localhost")
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }

        func swap(to version: String, _ contents: String) throws {
            try makeVersion(version, contents)
            #expect(symlink(version, "\(root)/..data_tmp") == 0)
            #expect(rename("\(root)/..data_tmp", "\(root)/..data") == 0)
        }
        try swap(to: "..2024_02", Self.edited)
        #expect(recorder.waitFor(key: "added"))
        try FileManager.default.removeItem(atPath: "\(root)/..2024_01")
        try swap(to: "..2024_03", Self.withMarker)
        #expect(recorder.waitFor(key: "marker"))

        #expect(recorder.changes(before: "marker") == [DefaultsChange(keys: ["host", "added"], origin: .outside)])
        #expect(suite.string(forKey: "host") == "example.org")
    }

    @Test func writesThroughASymlinkKeepTheSymlink() throws {
        let target = directory.file("real.json")
        try Data(Self.original.utf8).write(to: target)
        #expect(symlink(target.path, directory.file("link.json").path) == 0)
        let suite = try DefaultsSuite(fileURL: directory.file("link.json"))
        suite.set(9, forKey: "port")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("link.json").path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try contentsOnDisk(target)["port"] == .integer(9))
    }

    @Test func ownWritesDoNotEchoBackAsOutsideChanges() throws {
        let (suite, recorder, observation) = try makeSuite("echo")
        defer { observation.cancel() }
        suite.set("changed", forKey: "level")
        try HandEdit.renameOver(
            suite.fileURL, #"{ "host": "localhost", "port": 8080, "level": "changed", "marker": 1 }"#)
        #expect(recorder.waitFor(key: "marker"))
        #expect(recorder.changes(before: "marker") == [DefaultsChange(keys: ["level"], origin: .thisProcess)])
    }

    @Test func queueOverflowRereadsEverySuite() throws {
        let faults = WatchFaults()
        try Data(Self.original.utf8).write(to: directory.file("overflow.json"))
        let suite = try faults.suite("overflow", in: directory.url)
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }
        // Change the file without any event reaching the watcher for it, then deliver an overflow.
        let replacement = directory.file("elsewhere.json")
        try Data(Self.edited.utf8).write(to: replacement)
        faults.hide("overflow.json")
        #expect(rename(replacement.path, suite.fileURL.path) == 0)
        faults.overflow()
        #expect(recorder.waitFor(key: "added"))
        #expect(recorder.changes == [DefaultsChange(keys: ["host", "added"], origin: .outside)])
    }

    /// Under load the inotify queue can overflow again and again, so the close of one in-place save and the
    /// start of the next may both be lost. A settle period begun before the losses must not end by applying
    /// whatever the file holds then: the next save, half written.
    @Test func aSettlePeriodBegunBeforeAnOverflowNeverAppliesALaterHalfWrittenSave() throws {
        let faults = WatchFaults()
        let file = directory.file("settle.json"), markerFile = directory.file("marker.json")
        let full = { (counter: Int) in Array("{ \"constant\": \"kept\", \"counter\": \(counter) }".utf8) }
        try Data(full(0)).write(to: file)
        try Data(#"{ "marker": 0 }"#.utf8).write(to: markerFile)
        let suite = try faults.suite("settle", in: directory.url)
        let marker = try faults.suite("marker", in: directory.url)
        let changes = ChangeRecorder(), errors = ErrorRecorder()
        let observations = [
            suite.observe { changes.record($0) }, suite.observeErrors { errors.record($0) }, marker.observe { _ in }
        ]
        defer { observations.forEach { $0.cancel() } }
        /// Every check the watcher had due when it is called is done once `marker` holds `value`.
        func passMarker(_ value: Int) throws {
            try HandEdit.renameOver(markerFile, #"{ "marker": \#(value) }"#)
            #expect(eventually { marker.integer(forKey: "marker") == value })
        }
        faults.hide("settle.json")

        // A save caught half-written by the reread an overflow asks for: it is left to settle.
        let first = try FileHandle(forWritingTo: file)
        try first.truncate(atOffset: 0)
        try first.write(contentsOf: full(1).prefix(20))
        faults.overflow()
        try passMarker(1)
        let settleEnds = ContinuousClock.now.advanced(by: FileWatcher.settleDelay + .milliseconds(100))
        // It completes; its events are lost in another overflow, whose reread applies it.
        try first.write(contentsOf: full(1).dropFirst(20))
        try first.close()
        faults.overflow()
        #expect(eventually { suite.integer(forKey: "counter") == 1 })
        // The next save is half-written when the first settle period ends, its events lost as well.
        let second = try FileHandle(forWritingTo: file)
        try second.truncate(atOffset: 0)
        try second.write(contentsOf: full(2).prefix(20))
        // The library's own timer: the settle period has ended once the clock passed it and a later event was handled.
        let remaining = ContinuousClock.now.duration(to: settleEnds)
        if remaining > .zero { Thread.sleep(forTimeInterval: remaining / .seconds(1)) }
        try passMarker(2)
        #expect(suite.storedValue(forKey: "constant") == .string("kept"), "the half-written save was not applied")

        faults.show("settle.json")
        try second.write(contentsOf: full(2).dropFirst(20))
        try second.close()
        #expect(eventually { suite.integer(forKey: "counter") == 2 })
        #expect(!changes.changes.contains { $0.keys.contains("constant") }, "no key was ever seen removed")
        #expect(
            !errors.errors.contains { $0.kind == .malformedFile }, "no half-written file reported: \(errors.errors)")
    }

    @Test func watchingStartsWithTheFirstCrossProcessObserverAndStopsWithTheLast() throws {
        let suite = try DefaultsSuite(name: "lifecycle", directory: directory.url)
        let path = directory.url.path
        let local = suite.observe(scope: .thisProcess) { _ in }
        #expect(!FileWatcher.shared.watchedDirectories.contains(path))
        let first = suite.observe { _ in }
        let second = suite.observe(prefix: "x") { _ in }
        #expect(FileWatcher.shared.watchedDirectories.contains(path))
        first.cancel()
        #expect(FileWatcher.shared.watchedDirectories.contains(path))
        second.cancel()
        #expect(!FileWatcher.shared.watchedDirectories.contains(path))
        local.cancel()
    }
}
