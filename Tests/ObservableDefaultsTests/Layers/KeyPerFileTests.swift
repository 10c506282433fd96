import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A key-per-file layer on a real Kubernetes volume layout: keys are symlinks into `..data`, itself a
/// symlink to a timestamped directory, and an update renames a new `..data` over the old one.
@Suite struct KeyPerFileTests {
    let layers = LayerFixture()

    /// A volume as the kubelet's atomic writer lays it out, in `directory`.
    final class Volume: Sendable {
        let url: URL
        private let generation = Mutex(0)

        init(_ url: URL, _ files: [String: String]) throws {
            self.url = url
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try update(files)
        }

        /// Writes `files` as a new timestamped directory, swaps `..data` to it with one rename, then adds the
        /// symlinks of new keys and removes those of keys gone, and the old directory (the writer's order).
        func update(_ files: [String: String]) throws {
            let (old, new) = generation.withLock { count in
                count += 1
                return ("..2026_\(count - 1)", "..2026_\(count)")
            }
            let fileManager = FileManager.default
            let directory = url.appendingPathComponent(new)
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: false)
            for (name, contents) in files {
                try Data(contents.utf8).write(to: directory.appendingPathComponent(name))
            }
            let temporary = url.appendingPathComponent("..data_tmp")
            try fileManager.createSymbolicLink(atPath: temporary.path, withDestinationPath: new)
            #expect(rename(temporary.path, url.appendingPathComponent("..data").path) == 0)
            for name in files.keys where !fileManager.fileExists(atPath: url.appendingPathComponent(name).path) {
                try fileManager.createSymbolicLink(
                    atPath: url.appendingPathComponent(name).path, withDestinationPath: "..data/\(name)")
            }
            for name in try fileManager.contentsOfDirectory(atPath: url.path)
            where !name.hasPrefix(".") && files[name] == nil {
                try fileManager.removeItem(at: url.appendingPathComponent(name))
            }
            try? fileManager.removeItem(at: url.appendingPathComponent(old))
        }
    }

    @Test func filesAreKeysAndContentsAreTypedValues() throws {
        let volume = try Volume(
            layers.directory.file("volume"),
            ["workers": "7\n", "name": "a b\n", "hosts": "(a, b)", "ratio": "0.5", "empty": "", "two": "x\n\n"])
        try Data([0xFF, 0x00, 0xFE]).write(to: volume.url.appendingPathComponent("binary"))
        let suite = try layers.suite("volume", layers: [.file, .keyPerFile(volume.url)])
        #expect(suite.value(forKey: "workers") == .integer(7))
        #expect(suite.value(forKey: "name") == .string("a b"))
        #expect(suite.value(forKey: "hosts") == .array([.string("a"), .string("b")]))
        #expect(suite.value(forKey: "ratio") == .double(0.5))
        #expect(suite.value(forKey: "empty") == .string(""))
        #expect(suite.value(forKey: "two") == .string("x\n"), "one trailing newline is dropped")
        #expect(suite.value(forKey: "binary") == .data(Data([0xFF, 0x00, 0xFE])))
        #expect(suite.value(forKey: "..data") == nil)
        #expect(suite.origin(forKey: "workers") == .keyPerFile(volume.url.appendingPathComponent("workers")))
        // The suite's file is above the volume.
        suite.set(8, forKey: "workers")
        #expect(suite.value(forKey: "workers") == .integer(8))
        #expect(suite.currentErrors.isEmpty)
    }

    @Test func aVolumeUpdateIsOneChangePerChangedKey() throws {
        let volume = try Volume(layers.directory.file("swap"), ["a": "1", "b": "1", "same": "x"])
        let suite = try layers.suite("swap", layers: [.file, .keyPerFile(volume.url)])
        let seen = Recorder<String>()
        let changes = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { change in
            changes.record(change)
            for key in change.keys.sorted() {
                seen.record("\(key)=\(suite.value(forKey: key).map { "\($0)" } ?? "nil")")
            }
        }
        defer { observation.cancel() }

        try volume.update(["a": "2", "b": "2", "same": "x", "new": "n"])
        try volume.update(["a": "2", "b": "2", "same": "x", "new": "n", "marker": "1"])
        #expect(changes.waitFor(key: "marker"))
        let before = changes.changes(before: "marker")
        #expect(before.allSatisfy { $0.origin == .outside && $0.layer == .keyPerFile(volume.url) })
        let counts = Dictionary(before.flatMap(\.keys).map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts == ["a": 1, "b": 1, "new": 1], "each changed key once, the unchanged one never: \(before)")
        #expect(
            seen.items.filter { !$0.hasPrefix("marker") }.sorted() == [
                "a=integer(2)", "b=integer(2)", "new=string(\"n\")"
            ])

        // A key removed from the volume is a change too.
        changes.clear()
        try volume.update(["a": "2", "same": "x", "new": "n", "marker": "2"])
        #expect(eventually { suite.value(forKey: "b") == nil })
        #expect(changes.waitFor(key: "b"))
    }

    @Test func symlinksOutOfTheVolumeAndLargeFilesArePassedOverWithAnError() throws {
        let volume = try Volume(layers.directory.file("guarded"), ["ok": "1"])
        let outside = layers.directory.file("secret")
        try Data("stolen".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(
            atPath: volume.url.appendingPathComponent("escape").path, withDestinationPath: outside.path)
        try Data(count: KeyPerFileDirectory.sizeLimit + 1).write(to: volume.url.appendingPathComponent("huge"))
        let suite = try layers.suite("guarded", layers: [.file, .keyPerFile(volume.url)])
        #expect(suite.value(forKey: "ok") == .integer(1))
        #expect(suite.value(forKey: "escape") == nil)
        #expect(suite.value(forKey: "huge") == nil)
        let errors = suite.currentErrors
        #expect(errors.count == 2, "\(errors)")
        #expect(errors.contains { $0.kind == .untrustedFile && $0.fileURL?.lastPathComponent == "escape" })
        #expect(errors.contains { $0.kind == .unsupportedValue && $0.fileURL?.lastPathComponent == "huge" })

        try FileManager.default.removeItem(at: volume.url.appendingPathComponent("huge"))
        suite.reload()
        #expect(suite.currentErrors.count == 1)
    }
}
