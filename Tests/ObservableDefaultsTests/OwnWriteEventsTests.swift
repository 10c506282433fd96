import Foundation
import Testing
@testable import ObservableDefaults

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
            #expect(onSuite.count == 1 && onSuite[0].mask.contains(.movedTo),
                    "write \(value): the suite's name is touched once, by the rename: \(onSuite.map(\.mask))")
            #expect(!events.contains { $0.mask.contains(.attributesChanged) },
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
}
