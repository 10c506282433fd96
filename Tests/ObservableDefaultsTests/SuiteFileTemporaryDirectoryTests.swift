import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Where a save writes its temporary file (``SuiteFileTemporaryDirectory``): in the hidden subdirectory
/// `.observable-defaults/` when it is ours and private, beside the suite otherwise, and never through
/// anything someone else put at that name.
@Suite struct SuiteFileTemporaryDirectoryTests {
    let directory = TemporaryDirectory()
    static let otherUser: uid_t = 65534

    private var subdirectory: URL { directory.file(SuiteFileTemporaryDirectory.name) }

    private func status(_ url: URL) -> stat? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? info : nil
    }

    private func listing(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Watches the suites directory with the watcher's mask; `events()` drains what arrived since.
    private final class DirectoryEvents {
        let inotify: Inotify
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 4)

        init(_ directory: URL) throws {
            inotify = try Inotify()
            _ = try inotify.addWatch(directory.path, mask: FileWatcher.eventMask)
        }

        deinit { buffer.deallocate() }

        func events() throws -> [Inotify.Event] {
            var events: [Inotify.Event] = []
            try inotify.drainEvents(into: buffer) { events.append($0) }
            return events
        }
    }

    @Test func theTemporaryFileIsWrittenInAPrivateHiddenSubdirectoryAndNothingIsLeftThere() throws {
        let suite = try DefaultsSuite(name: "app", directory: directory.url)
        suite.set(1, forKey: "k")
        #expect(suite.writeError == nil)
        #expect(try listing(directory.url) == [".app.json.lock", SuiteFileTemporaryDirectory.name, "app.json"])
        let info = try #require(status(subdirectory))
        #expect(info.st_mode & S_IFMT == S_IFDIR)
        #expect(info.st_mode & 0o7777 == 0o700)
        #expect(info.st_uid == geteuid())
        #expect(try listing(subdirectory).isEmpty)
        #expect(try contentsOnDisk(suite.fileURL) == ["k": .integer(1)])
    }

    /// Only the rename reaches watchers of the suites directory: the temporary file's creation, writing
    /// and close happen where no watch sees them.
    @Test func aSaveWakesWatchersOfTheSuitesDirectoryOnlyWithItsRename() throws {
        let suite = try DefaultsSuite(name: "quiet", directory: directory.url)
        suite.set(1, forKey: "k")  // the subdirectory exists from here on
        let watch = try DirectoryEvents(directory.url)
        for value in 2...6 {
            suite.set(value, forKey: "k")
            // Events are queued by the system calls themselves, so they are all there when `set` returns.
            let events = try watch.events()
            #expect(
                events.count == 1 && events[0].name == "quiet.json" && events[0].mask.contains(.movedTo),
                "write \(value): \(events.map { ($0.name, $0.mask) })")
        }
    }

    @Test func aRemovedSubdirectoryIsCreatedAgain() throws {
        let suite = try DefaultsSuite(name: "again", directory: directory.url)
        suite.set(1, forKey: "k")
        try FileManager.default.removeItem(at: subdirectory)
        suite.set(2, forKey: "k")
        #expect(suite.writeError == nil)
        #expect(status(subdirectory).map { $0.st_mode & S_IFMT } == S_IFDIR)
        #expect(try contentsOnDisk(suite.fileURL) == ["k": .integer(2)])
    }

    /// What may be at the subdirectory's name that must not be written through or changed.
    enum Occupant: String, CaseIterable, CustomTestStringConvertible {
        case symlinkToADirectory, directoryOthersCanRead, directoryOfAnotherUser, regularFile
        var testDescription: String { rawValue }
    }

    /// The save writes beside the suite instead, and leaves what is there as it was.
    @Test(arguments: Occupant.allCases) func aSubdirectoryNameThatIsNotOursPrivatelyIsLeftAlone(_ occupant: Occupant)
        throws
    {
        // Private and ours, so only the `lstat` (not following the link) keeps a save out of it.
        let elsewhere = directory.file("elsewhere")
        try FileManager.default.createDirectory(
            at: elsewhere, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        switch occupant {
        case .symlinkToADirectory:
            #expect(symlink(elsewhere.path, subdirectory.path) == 0)
        case .directoryOthersCanRead:
            try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
            #expect(chmod(subdirectory.path, 0o755) == 0)
        case .directoryOfAnotherUser:
            try #require(geteuid() == 0, "needs root to give the directory away")
            try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
            #expect(chmod(subdirectory.path, 0o700) == 0)
            #expect(chown(subdirectory.path, Self.otherUser, Self.otherUser) == 0)
        case .regularFile:
            try Data("notes".utf8).write(to: subdirectory)
        }
        let before = try #require(status(subdirectory))
        let suite = try DefaultsSuite(name: "beside", directory: directory.url)
        suite.set(1, forKey: "k")
        let watch = try DirectoryEvents(directory.url)
        suite.set(2, forKey: "k")
        let events = try watch.events()

        #expect(suite.writeError == nil)
        #expect(try contentsOnDisk(suite.fileURL) == ["k": .integer(2)])
        #expect(
            events.contains { $0.name.hasPrefix(".beside.json.") && $0.mask.contains(.created) },
            "the temporary file was written beside the suite: \(events.map(\.name))")
        let after = try #require(status(subdirectory))
        #expect(after.st_ino == before.st_ino && after.st_mode == before.st_mode && after.st_uid == before.st_uid)
        #expect(try listing(elsewhere).isEmpty)
        if occupant != .regularFile && occupant != .symlinkToADirectory {
            #expect(try listing(subdirectory).isEmpty)
        }
        #expect(try listing(directory.url).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    /// Root saving into a user's directory does not leave a directory of root's there.
    @Test func aSuiteDirectoryOfAnotherUserGetsNoSubdirectory() throws {
        try #require(geteuid() == 0, "needs root to give the directory away")
        let suites = directory.file("theirs")
        try FileManager.default.createDirectory(at: suites, withIntermediateDirectories: false)
        #expect(chown(suites.path, Self.otherUser, Self.otherUser) == 0)
        #expect(chmod(suites.path, 0o700) == 0)
        let suite = try DefaultsSuite(name: "app", directory: suites)
        suite.set(1, forKey: "k")
        #expect(suite.writeError == nil)
        #expect(try contentsOnDisk(suite.fileURL) == ["k": .integer(1)])
        #expect(try listing(suites) == [".app.json.lock", "app.json"])
    }
}
