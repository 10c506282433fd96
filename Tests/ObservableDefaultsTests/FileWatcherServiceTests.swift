import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `FileWatcher` as a service of its own: it knows paths and callbacks, no suite.
@Suite struct FileWatcherServiceTests {
    let directory = TemporaryDirectory()

    /// What a callback received, in order, from the watcher's thread.
    final class Events: Sendable {
        enum Kind: Equatable { case changed, lost(Int32?), restored, failed }
        private let received = Locked<[Kind]>([])
        var kinds: [Kind] { received.withLock { $0 } }

        func record(_ event: WatchEvent) {
            let kind: Kind
            switch event {
            case .fileMayHaveChanged(let gate):
                // As an owner does after reading: the watcher takes in events that came meanwhile.
                _ = gate(false)
                kind = .changed
            case .watchLost(let error, _): kind = .lost(error.errorNumber)
            case .watchRestored: kind = .restored
            case .watcherFailed: kind = .failed
            }
            received.withLock { $0.append(kind) }
        }
    }

    @Test func anotherProcessWritingAWatchedFileIsTold() throws {
        let file = directory.file("plain.json")
        let events = Events()
        let token = FileWatcher.shared.watch(file: file.path) { events.record($0) }
        defer { FileWatcher.shared.unwatch(token) }
        #expect(FileWatcher.shared.watchedDirectories.contains(directory.url.path))
        #expect(try TestAgent.run(["set", file.path, "k", "int:1"]) == 0)
        #expect(eventually { events.kinds.contains(.changed) })
        // A new watch counts as restored (its file is checked, as nothing watched before); nothing failed.
        #expect(
            events.kinds.allSatisfy { $0 == .changed || $0 == .restored }, "nothing lost or failed: \(events.kinds)")
    }

    @Test func aMissingDirectoryIsLostThenRestored() throws {
        let missing = directory.file("later")
        let events = Events()
        let token = FileWatcher.shared.watch(file: missing.appendingPathComponent("plain.json").path) {
            events.record($0)
        }
        defer { FileWatcher.shared.unwatch(token) }
        #expect(events.kinds == [.lost(ENOENT)], "told at once, naming ENOENT")
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
        #expect(eventually { events.kinds.contains(.restored) })
        #expect(eventually { FileWatcher.shared.watchedDirectories.contains(missing.path) })
        #expect(!events.kinds.contains(.failed))
    }

    @Test func aLossIsToldOnceNotOnEveryUpdateOfTheWatchedSet() throws {
        let missing = directory.file("absent")
        let faults = WatchFaults()
        let watcher = faults.watcher
        let events = Events()
        let token = watcher.watch(file: missing.appendingPathComponent("plain.json").path) { events.record($0) }
        defer { watcher.unwatch(token) }
        // Other files coming and going update the watched set; the missing directory is no news to this file.
        for index in 0..<3 {
            let other = watcher.watch(file: directory.file("other-\(index).json").path) { _ in }
            watcher.unwatch(other)
        }
        #expect(events.kinds == [.lost(ENOENT)], "told once: \(events.kinds)")
        // A different reason is news: the system refuses to watch the directory (told at the next update).
        faults.refuse(missing.path, with: ENOSPC)
        watcher.unwatch(watcher.watch(file: directory.file("other.json").path) { _ in })
        #expect(events.kinds == [.lost(ENOENT), .lost(ENOSPC)], "\(events.kinds)")
        // The same refusal once the directory exists is no news (a URL made from the path would now end in
        // a slash and compare unequal: that told it twice under parallel tests).
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
        watcher.unwatch(watcher.watch(file: directory.file("other.json").path) { _ in })
        #expect(events.kinds == [.lost(ENOENT), .lost(ENOSPC)], "each reason told once: \(events.kinds)")
    }

    @Test func unwatchingEndsTheWatch() throws {
        let sub = directory.file("alone")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
        let events = Events()
        let token = FileWatcher.shared.watch(file: sub.appendingPathComponent("plain.json").path) { events.record($0) }
        #expect(FileWatcher.shared.watchedDirectories.contains(sub.path))
        FileWatcher.shared.unwatch(token)
        #expect(!FileWatcher.shared.watchedDirectories.contains(sub.path))
        let before = events.kinds.count
        #expect(try TestAgent.run(["set", sub.appendingPathComponent("plain.json").path, "k", "int:1"]) == 0)
        // A second, still watched file in the same parent proves events are flowing, then nothing came.
        let marker = Events()
        let markerToken = FileWatcher.shared.watch(file: directory.file("marker.json").path) { marker.record($0) }
        defer { FileWatcher.shared.unwatch(markerToken) }
        #expect(try TestAgent.run(["set", directory.file("marker.json").path, "k", "int:1"]) == 0)
        #expect(eventually { marker.kinds.contains(.changed) })
        #expect(events.kinds.count == before, "no event after unwatch: \(events.kinds)")
    }
}
