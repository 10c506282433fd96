import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The typed system-call layer (`System/`) on real files and a real inotify instance.
@Suite struct SystemLayerTests {
    let directory = TemporaryDirectory()

    @Test func fileDescriptorClosesWhenItsValueEnds() throws {
        let path = directory.file("closed").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        var raw: Int32 = -1
        do {
            let file = try FileDescriptor(opening: path, .readOnly)
            raw = file.rawValue
            #expect(fcntl(raw, F_GETFD) != -1, "open while the value lives")
            #expect(fcntl(raw, F_GETFD) & FD_CLOEXEC != 0, "never leaks into a child process")
        }
        #expect(fcntl(raw, F_GETFD) == -1 && errno == EBADF, "closed when the value ended")
    }

    /// Positioned reads and writes leave the file offset alone; a failed one names `pread` or `pwrite`.
    @Test func positionedReadsAndWritesAndTruncation() throws {
        let path = directory.file("positioned").path
        let file = try FileDescriptor(opening: path, [.readWrite, .create], mode: 0o600)
        try file.writeAll(Data("hello world".utf8), at: 0)
        try file.writeAll(Data("W".utf8), at: 6)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 1)
        defer { buffer.deallocate() }
        let count = try file.readSome(into: buffer, at: 0)
        #expect(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<count]), as: UTF8.self) == "hello World")
        #expect(try file.readSome(into: buffer, at: 6) == 5)
        try file.truncate(to: 5)
        #expect(try file.status().size == 5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("hello".utf8))

        let readOnly = try FileDescriptor(opening: path, .readOnly)
        do {
            try readOnly.writeAll(Data("x".utf8), at: 0)
            Issue.record("a write through a read-only descriptor succeeded")
        } catch {
            #expect(error.call == "pwrite" && error.path == path && error.errno.rawValue == EBADF)
        }
    }

    @Test func failedCallsNameTheCallThePathAndTheErrno() throws {
        let missing = directory.file("missing/file").path
        let failure = try #require(throws: SystemCallError.self) { _ = try FileDescriptor(opening: missing, .readOnly) }
        #expect(failure == SystemCallError("open", path: missing, errno: .noSuchFile))
        let error = DefaultsError(failure, "cannot open the suite file for reading", fileURL: nil)
        #expect(error.kind == .fileSystem)
        #expect(error.errorNumber == ENOENT)
        #expect(error.message == "cannot open the suite file for reading (open \(missing))")
        // A message that names the path already gets only the call.
        let named = DefaultsError(failure, "cannot open \(missing)", fileURL: nil)
        #expect(named.message == "cannot open \(missing) (open)")
    }

    @Test func fileStatusTellsKindsPermissionsAndIdentity() throws {
        let file = directory.file("status")
        try Data("12345".utf8).write(to: file)
        #expect(chmod(file.path, 0o640) == 0)
        let link = directory.file("link").path
        #expect(symlink(file.path, link) == 0)
        let status = try FileStatus(path: file.path)
        #expect(status.kind == .regular)
        #expect(status.permissions == 0o640)
        #expect(status.size == 5)
        #expect(try FileStatus(path: link).node == status.node, "stat follows the link")
        #expect(try FileStatus(linkAt: link).kind == .symlink, "lstat does not")
        #expect(try FileStatus(path: directory.url.path).kind == .directory)
        #expect(FileStatus.ifPresent(at: directory.file("none").path) == nil)
        #expect(FileSystem.symlinkTarget(of: link) == file.resolvingSymlinksInPath().path)
        #expect(FileSystem.symlinkTarget(of: file.path) == file.path)
    }

    @Test func inotifyEventsAreDecodedWithTheirNames() throws {
        let inotify = try Inotify()
        let watch = try inotify.addWatch(directory.url.path, mask: [.created, .deleted, .onlyDirectory])
        // Names of several lengths, so the kernel pads them differently.
        let names = ["a", "settings.json", String(repeating: "n", count: 200)]
        // Created in place (`FileManager` would write a temporary file and rename it).
        for name in names { #expect(close(open(directory.file(name).path, O_CREAT | O_WRONLY, 0o600)) == 0) }
        try FileManager.default.removeItem(at: directory.file("a"))
        var events: [Inotify.Event] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 4)
        defer { buffer.deallocate() }
        #expect(
            eventually {
                _ = try? inotify.drainEvents(into: buffer) { events.append($0) }
                return events.count >= 4
            })
        #expect(events.map(\.name) == names + ["a"])
        #expect(events.allSatisfy { $0.watch == watch })
        #expect(events.prefix(3).allSatisfy { $0.mask.contains(.created) })
        #expect(events[3].mask.contains(.deleted))
        try inotify.drainEvents(into: buffer) { Issue.record("unexpected event \($0)") }
    }

    /// The watcher's wake-up for one save costs one `read`: a read that left room for the largest event
    /// emptied the queue, so no second read (which would fail with `EAGAIN`) is made. A queue larger than
    /// the buffer is still read to the end, in order.
    @Test func drainingAnEventQueueThatFitsTakesOneRead() throws {
        let inotify = try Inotify()
        _ = try inotify.addWatch(directory.url.path, mask: [.created, .onlyDirectory])
        let large = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 4)
        defer { large.deallocate() }
        var names: [String] = []
        // inotify queues an event during the system call that causes it: no waiting needed.
        for name in ["one", "two", "three"] {
            #expect(close(open(directory.file(name).path, O_CREAT | O_WRONLY, 0o600)) == 0)
        }
        #expect(try inotify.drainEvents(into: large) { names.append($0.name) } == 1)
        #expect(names == ["one", "two", "three"])
        #expect(
            try inotify.drainEvents(into: large) { Issue.record("unexpected event \($0)") } == 1,
            "an empty queue: one read (EAGAIN)")

        // Room for two of these events per read, less than the largest event left over: reads go on.
        let small = UnsafeMutableRawBufferPointer.allocate(byteCount: Inotify.largestEventSize + 300, alignment: 4)
        defer { small.deallocate() }
        let many = (0..<40).map { String(format: "%03d", $0) + String(repeating: "x", count: 200) }
        for name in many { #expect(close(open(directory.file(name).path, O_CREAT | O_WRONLY, 0o600)) == 0) }
        names = []
        let reads = try inotify.drainEvents(into: small) { names.append($0.name) }
        #expect(names == many)
        #expect(reads >= 20)
    }

    @Test func aRefusedWatchIsATypedFailure() throws {
        let inotify = try Inotify()
        let file = directory.file("plain")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let failure = try #require(throws: SystemCallError.self) {
            try inotify.addWatch(file.path, mask: [.created, .onlyDirectory])
        }
        #expect(failure.call == "inotify_add_watch" && failure.errno == .notDirectory)
    }

    /// Moving aside never replaces what an earlier move put there: the next free `.2`, `.3`, … is taken.
    @Test func movingAsideKeepsWhatIsAlreadyThere() throws {
        let aside = directory.file("copy.broken").path
        var moved: [String] = []
        for text in ["first", "second", "third"] {
            let file = directory.file("copy").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            moved.append(try FileSystem.moveAside(file, to: aside))
        }
        #expect(moved == [aside, aside + ".2", aside + ".3"])
        #expect(
            try moved.map { String(decoding: try Data(contentsOf: URL(fileURLWithPath: $0)), as: UTF8.self) } == [
                "first", "second", "third"
            ])
        let missing = try #require(throws: SystemCallError.self) {
            try FileSystem.moveAside(directory.file("none").path, to: aside)
        }
        #expect(missing.call == "rename" && missing.errno == .noSuchFile)
    }
}
