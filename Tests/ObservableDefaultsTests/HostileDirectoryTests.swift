import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Directories other users can write: planted symlinks are not followed where the kernel's
/// `protected_symlinks` rule would not follow them, and a world-writable directory that is not sticky is
/// refused. "Another user" is uid 65534 (nobody): the tests run as root (CI) and give files away.
@Suite struct HostileDirectoryTests {
    let directory = TemporaryDirectory()
    static let otherUser: uid_t = 65534

    private func mode(_ url: URL) -> mode_t {
        var info = stat()
        lstat(url.path, &info)
        return info.st_mode & 0o7777
    }

    /// A directory owned by root with `mode`, holding a file of another user and, at `link`, that
    /// user's symlink to it.
    private func plantLink(directoryMode: mode_t, directoryOwner: uid_t = 0) throws -> (
        suites: URL, link: URL, target: URL
    ) {
        let suites = directory.file("shared")
        try FileManager.default.createDirectory(at: suites, withIntermediateDirectories: false)
        let target = directory.file("attacker.json")
        try Data(#"{"planted": 1}"#.utf8).write(to: target)
        chmod(target.path, 0o666)
        #expect(chown(target.path, Self.otherUser, Self.otherUser) == 0)
        let link = suites.appendingPathComponent("victim.json")
        #expect(symlink(target.path, link.path) == 0)
        #expect(lchown(link.path, Self.otherUser, Self.otherUser) == 0)
        #expect(chown(suites.path, directoryOwner, directoryOwner) == 0)
        #expect(chmod(suites.path, directoryMode) == 0)
        return (suites, link, target)
    }

    /// Another user's suite as that user's process meets it (the agent runs as uid 65534): a file it may not
    /// read is an error naming the file and the reason; a change it may not write (no right to the
    /// directory's lock file) is reported as lost, with the key, when the process exits. The file is left
    /// as it was, and nothing is left beside it.
    @Test func anotherUsersSuiteIsAClearErrorAndStaysAsItWas() throws {
        try #require(geteuid() == 0, "needs root to run a process as another user")
        let suites = directory.file("root-suites")
        try FileManager.default.createDirectory(at: suites, withIntermediateDirectories: false)
        #expect(chmod(suites.path, 0o755) == 0)
        let file = suites.appendingPathComponent("settings.json")
        try Data(#"{"a": 1}"#.utf8).write(to: file)
        #expect(chmod(file.path, 0o600) == 0)
        let set = ["as-user", String(Self.otherUser), "set", file.path, "k", "v"]

        let unreadable = try TestAgent.runReadingErrors(set)
        #expect(unreadable.status != 0)
        #expect(
            unreadable.errors.contains(
                "cannot open the suite file for reading (open \(file.path)) (Permission denied)"),
            "\(unreadable.errors)")

        #expect(chmod(file.path, 0o644) == 0)
        let unwritable = try TestAgent.runReadingErrors(set)
        #expect(unwritable.status != 0)
        let lock = suites.appendingPathComponent(".settings.json.lock").path
        #expect(
            unwritable.errors.contains("1 change to \(file.path) could not be written and is lost (key 'k')"),
            "\(unwritable.errors)")
        #expect(
            unwritable.errors.contains("cannot open the lock file \(lock) (open) (Permission denied)"),
            "\(unwritable.errors)")

        #expect(try contentsOnDisk(file) == ["a": .integer(1)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: suites.path) == ["settings.json"])
    }

    @Test func symlinkOfAnotherUserInAStickyWorldWritableDirectoryIsNotFollowed() throws {
        try #require(geteuid() == 0, "needs root to plant files as another user")
        let (suites, _, target) = try plantLink(directoryMode: 0o1777)
        let suite = try DefaultsSuite(name: "victim", directory: suites)
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        suite.set("secret", forKey: "token")
        #expect(try contentsOnDisk(target) == ["planted": .integer(1)])
        let error = try #require(errors.errors.first)
        #expect(error.errorNumber == EPERM)
        #expect(error.message.contains("symlink owned by another user (uid 65534)"))
        #expect(suite.hasPendingChanges)
    }

    @Test func symlinkOfTheDirectoryOwnerIsFollowed() throws {
        try #require(geteuid() == 0, "needs root to plant files as another user")
        // The link belongs to the owner of the (sticky, world-writable) directory.
        let (suites, link, target) = try plantLink(directoryMode: 0o1777, directoryOwner: Self.otherUser)
        let suite = try DefaultsSuite(name: "victim", directory: suites)
        suite.set(1, forKey: "mine")
        #expect(suite.writeError == nil)
        #expect(try contentsOnDisk(target) == ["planted": .integer(1), "mine": .integer(1)])
        var info = stat()
        #expect(lstat(link.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
    }

    @Test func symlinkInADirectoryOthersCannotWriteIsFollowed() throws {
        try #require(geteuid() == 0, "needs root to plant files as another user")
        // The Kubernetes ConfigMap layout: links into a data directory, in a directory only its owner
        // may change.
        let (suites, _, target) = try plantLink(directoryMode: 0o755)
        let suite = try DefaultsSuite(name: "victim", directory: suites)
        suite.set(1, forKey: "mine")
        #expect(suite.writeError == nil)
        #expect(try contentsOnDisk(target) == ["planted": .integer(1), "mine": .integer(1)])
    }

    @Test func worldWritableDirectoryThatIsNotStickyIsRefusedByName() throws {
        let suites = directory.file("open")
        try FileManager.default.createDirectory(at: suites, withIntermediateDirectories: false)
        chmod(suites.path, 0o777)
        let suite = try DefaultsSuite(name: "app", directory: suites)
        suite.set(1, forKey: "a")
        let error = try #require(suite.writeError)
        #expect(error.message.contains("directory \(suites.path) is writable by other users and not sticky"))
        #expect(!FileManager.default.fileExists(atPath: suite.fileURL.path))
        // Made sticky, the retry lands on its own.
        chmod(suites.path, 0o1777)
        #expect(eventually { (try? contentsOnDisk(suite.fileURL)) == ["a": .integer(1)] })
    }

    @Test func symlinkAtTheLockPathIsNotFollowed() throws {
        let elsewhere = directory.file("elsewhere")
        let lockLink = directory.file(".app.json.lock")
        #expect(symlink(elsewhere.path, lockLink.path) == 0)
        let suite = try DefaultsSuite(name: "app", directory: directory.url)
        suite.set(1, forKey: "a")
        let error = try #require(suite.writeError)
        #expect(error.errorNumber == ELOOP)
        #expect(error.message.contains("the lock file \(lockLink.path) is a symlink"))
        #expect(!FileManager.default.fileExists(atPath: elsewhere.path))
        #expect(suite.hasPendingChanges)
    }

    @Test func fifoAtTheLockPathDoesNotHang() throws {
        let lockPath = directory.file(".app.json.lock")
        #expect(mkfifo(lockPath.path, 0o600) == 0)
        let suite = try DefaultsSuite(name: "app", directory: directory.url)
        suite.set(1, forKey: "a")
        #expect(suite.writeError?.message.contains("is not a regular file") == true)
        #expect(suite.hasPendingChanges)
    }
}
