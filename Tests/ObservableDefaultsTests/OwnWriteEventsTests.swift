import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// What one write of ours costs every watcher of the suites directory (our own watcher among them): each
/// inotify event wakes them, and an event on the suite's own name makes each check the suite.
@Suite struct OwnWriteEventsTests {
    let directory = TemporaryDirectory()

    @Test func aWriteTouchesTheSuitesNameOnceAndChangesNoAttributes() throws {
        let suite = try DefaultsSuite(name: "events", directory: directory.url)
        suite.set(1, forKey: "k")  // the file exists from here on, with the mode it keeps
        let inotify = try Inotify()
        _ = try inotify.addWatch(directory.url.path, mask: FileWatcher.eventMask)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 4)
        defer { buffer.deallocate() }

        for value in 2...6 {
            suite.set(value, forKey: "k")
            // Events are queued by the system calls themselves, so they are all there when `set` returns.
            var events: [Inotify.Event] = []
            try inotify.drainEvents(into: buffer) { events.append($0) }
            let onSuite = events.filter { $0.name == suite.fileURL.lastPathComponent }
            #expect(
                onSuite.count == 1 && onSuite[0].mask.contains(.movedTo),
                "write \(value): the suite's name is touched once, by the rename: \(onSuite.map(\.mask))")
            #expect(
                !events.contains { $0.mask.contains(.attributesChanged) },
                "write \(value): no attribute change when the mode is already right: \(events.map(\.name))")
        }
    }

    @Test func aSuiteWithAnotherModeKeepsIt() throws {
        let suite = try DefaultsSuite(name: "mode", directory: directory.url)
        suite.set(1, forKey: "k")
        #expect(chmod(suite.fileURL.path, 0o640) == 0)
        suite.set(2, forKey: "k")
        let mode = try FileManager.default.attributesOfItem(atPath: suite.fileURL.path)[.posixPermissions] as? Int
        #expect(mode == 0o640)
        #expect(try DefaultsSuite(name: "mode", directory: directory.url).integer(forKey: "k") == 2)
    }

    /// The watcher's check of our own rename ends at its `stat`, without waiting for the write to finish
    /// merging: it used to wait on the file's document lock, parking the watcher thread (and every other
    /// suite's events with it) and waking it a second time per write.
    @Test func theCheckOfAWriteBeingMergedDoesNotWaitForIt() throws {
        let suite = try DefaultsSuite(name: "held", directory: directory.url)
        suite.set(1, forKey: "k")
        let held = HeldWrite(suite.storage, key: "k", value: .integer(2))
        #expect(eventually { held.isMerging }, "the write reached its merge")

        // Called as the watcher calls it for the rename's event.
        let checked = Atomic(false)
        let checker = Thread {
            suite.storage.fileMayHaveChanged(gate: { _ in true }); checked.store(true, ordering: .releasing)
        }
        checker.start()
        // It returns while the write is still held in its merge (released only below).
        #expect(
            eventually { checked.load(ordering: .acquiring) },
            "the check of our own rename waited for the write's merge")
        held.release()
        #expect(eventually { held.isFinished && checked.load(ordering: .acquiring) })
        #expect(suite.integer(forKey: "k") == 2)
    }

    /// A version someone else renamed over ours while our write was still merging it is not taken for
    /// ours: it is re-read and its keys announced.
    @Test func aVersionWrittenByOthersWhileOursMergesIsAnnounced() throws {
        let suite = try DefaultsSuite(name: "held-other", directory: directory.url)
        suite.set(1, forKey: "k")
        let recorder = ChangeRecorder()
        let observation = suite.observe(scope: .allProcesses) { recorder.record($0) }
        defer { observation.cancel() }
        let held = HeldWrite(suite.storage, key: "k", value: .integer(2))
        #expect(eventually { held.isMerging }, "the write reached its merge")

        try HandEdit.renameOver(suite.fileURL, #"{"k": 3, "other": 1}"#)
        held.release()
        #expect(recorder.waitFor(key: "other"), "the other writer's version was taken for ours")
        #expect(eventually { suite.integer(forKey: "k") == 3 && suite.integer(forKey: "other") == 1 })
        #expect(eventually { held.isFinished }, "the held write did not finish after its release")
    }
}

/// A write of one key through the suite's file (as ``SuiteStorage`` makes it), held after the rename and
/// before its merge, until ``release()``: the moment an event of the rename reaches the watcher.
private final class HeldWrite: Sendable {
    private let merging = Atomic(false)
    private let released = Atomic(false)
    private let finished = Atomic(false)

    init(_ storage: SuiteStorage, key: ExactKey, value: DefaultsValue) {
        _ = storage.state.withLock { $0.memory.set(value, forKey: key) }
        let thread = Thread { [self] in
            // The steps of SuiteStorage's write, held before the merge.
            let written = storage.file.withDocument { document -> SuiteStorage.Announcement? in
                let request = storage.state.withLock {
                    SuiteFile.WriteRequest(
                        pending: $0.memory.pendingChanges, update: nil, options: .init(lockWaitLimit: .seconds(5)))
                }
                guard let version = try? storage.file.write(request, into: &document) else { return nil }
                merging.store(true, ordering: .releasing)
                while !released.load(ordering: .acquiring) { usleep(1000) }
                let announcement = storage.merge(version)
                storage.file.makeKnown(version.identity)
                return announcement
            }
            if let written { storage.announce(written) }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    var isMerging: Bool { merging.load(ordering: .acquiring) }
    var isFinished: Bool { finished.load(ordering: .acquiring) }
    func release() { released.store(true, ordering: .releasing) }
}
