import Foundation
import ObservableDefaults
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `export` to symlinks, FIFOs, devices and descriptor paths writes through them and never replaces
/// anything but a regular file (issue 9, item 1).
@Suite struct ExportDestinationTests {
    /// A suite `app` and the XML property list `export app` must produce.
    private func seeded(_ directory: TemporaryDirectory) throws -> (Defaults, expected: Data) {
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "theme", "dark")
        try defaults.ok("write", "app", "size", "-int", "12")
        let expected = try SuiteFormat.propertyList.encodeSuite(["theme": .string("dark"), "size": .integer(12)])
        return (defaults, expected)
    }

    /// The file type bits of the entry itself (`lstat`), and a symlink's target.
    private func entry(_ path: String) -> (type: mode_t, link: String?) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return (0, nil) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFLNK else { return (type, nil) }
        return (type, try? FileManager.default.destinationOfSymbolicLink(atPath: path))
    }

    /// The directory's visible and hidden entries (an export must leave no temporary file behind).
    private func listing(_ directory: TemporaryDirectory) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    @Test func symlinkToARegularFileIsWrittenThroughAndStaysALink() throws {
        let directory = TemporaryDirectory()
        let (defaults, expected) = try seeded(directory)
        let target = directory.file("target.plist"), link = directory.file("link.plist")
        try Data("old contents".utf8).write(to: target)
        chmod(target.path, 0o640)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target.plist")
        let before = try listing(directory)
        try defaults.ok("export", "app", link.path)
        #expect(entry(link.path).type == S_IFLNK)
        #expect(entry(link.path).link == "target.plist")
        #expect(try Data(contentsOf: target) == expected)
        var info = stat()
        stat(target.path, &info)
        #expect(info.st_mode & 0o777 == 0o640, "the target keeps its permissions")
        #expect(try listing(directory) == before)
    }

    @Test func danglingSymlinkCreatesItsTarget() throws {
        let directory = TemporaryDirectory()
        let (defaults, expected) = try seeded(directory)
        let link = directory.file("dangling")
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: directory.file("created.plist").path)
        try defaults.ok("export", "app", link.path)
        #expect(entry(link.path).type == S_IFLNK)
        #expect(entry(directory.file("created.plist").path).type == S_IFREG)
        #expect(try Data(contentsOf: directory.file("created.plist")) == expected)
    }

    @Test func fifoIsWrittenInPlace() throws {
        let directory = TemporaryDirectory()
        let (defaults, expected) = try seeded(directory)
        let fifo = directory.file("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A reader opened without blocking, so the tool's open for writing does not wait and a failing
        // tool cannot hang the test; the FIFO buffers the few hundred bytes until the tool has exited.
        let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        try defaults.ok("export", "app", fifo.path)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(reader, &buffer, buffer.count)
            if count <= 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        #expect(received == expected)
        #expect(entry(fifo.path).type == S_IFIFO, "the FIFO is still a FIFO")
    }

    @Test func devStdoutThroughALinkInAPrivateDirectoryAndDirectly() throws {
        let directory = TemporaryDirectory()
        let (defaults, expected) = try seeded(directory)
        let link = directory.file("out")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/stdout")
        let viaLink = try defaults.run(["export", "app", link.path])
        #expect(viaLink.status == 0, "\(viaLink)")
        #expect(viaLink.stdoutData == expected)
        #expect(entry(link.path).link == "/dev/stdout")

        // The real /dev/stdout, /dev/fd/1 and /proc/self/fd/1, with the child's stdout captured in a file:
        // each is written through, and /dev/stdout stays the system's symlink.
        let systemLink = entry("/dev/stdout")
        for path in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            let direct = try defaults.run(["export", "app", path, "--format", "json"])
            #expect(direct.status == 0, "\(path): \(direct)")
            #expect(
                direct.stdoutData
                    == (try SuiteFormat.json.encodeSuite(["theme": .string("dark"), "size": .integer(12)])), "\(path)")
        }
        #expect(entry("/dev/stdout").type == systemLink.type)
        #expect(entry("/dev/stdout").link == systemLink.link)
        // The hidden subdirectory is where the seeding writes put their temporary files; none is left there.
        #expect(try listing(directory) == ["app.json", ".app.json.lock", ".observable-defaults", "out"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.file(".observable-defaults").path).isEmpty)
    }

    @Test func characterDeviceIsWrittenInPlace() throws {
        let directory = TemporaryDirectory()
        let (defaults, _) = try seeded(directory)
        // /dev/null through a link in the private directory: opened and written, never replaced.
        let link = directory.file("null")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/null")
        try defaults.ok("export", "app", link.path)
        #expect(entry(link.path).link == "/dev/null")
        #expect(entry("/dev/null").type == S_IFCHR)
    }

    @Test func regularFileIsReplacedAtomicallyAndOtherKindsAreRefused() throws {
        let directory = TemporaryDirectory()
        let (defaults, expected) = try seeded(directory)
        let file = directory.file("out.plist")
        try Data("old".utf8).write(to: file)
        try defaults.ok("export", "app", file.path)
        #expect(try Data(contentsOf: file) == expected)
        let subdirectory = directory.file("sub")
        try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
        let before = try listing(directory)
        let refused = try defaults.run(["export", "app", subdirectory.path])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("cannot export to \(subdirectory.path): \(subdirectory.path) is a directory"),
            "\(refused)")
        #expect(try listing(directory) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: subdirectory.path).isEmpty)
    }
}
