import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The floor of a write-through `set`: the system calls our save makes, in the same order, with no library
/// code around them (no encoding, no merge, no notification).
///
/// Per save: the directory's `stat` and the suite's `lstat` (the directory policy), the lock file opened,
/// checked and `flock`ed, the suite's `stat`, its write-access check, the temporary file's subdirectory
/// `lstat`ed (in a subdirectory), the temporary file created and opened again read-only, written,
/// `fstat`ed and closed, the directory opened and `flock`ed (the commit lock), the suite's `stat`,
/// `rename(2)`, the new file's `fstat`, then everything closed.
final class RawSave {
    private let path: String
    private let directory: String
    private let lockPath: String
    /// Where temporary files are made: beside the suite, or in a subdirectory of its directory.
    private let temporaryDirectory: String
    /// The temporary file is made without a name (`O_TMPFILE`) and linked under its name just before the
    /// rename, so watchers of the directory see no event of its writing.
    private let unnamed: Bool
    private let bytes: [UInt8]
    private var counter: UInt32 = 0
    /// `O_TMPFILE` (a C macro Swift does not import): `__O_TMPFILE | O_DIRECTORY`, `__O_TMPFILE` being
    /// 0o20000000 on the architectures this runs on (x86_64, arm64).
    private static let temporaryFileFlag: Int32 = 0o20000000 | O_DIRECTORY

    /// Where the temporary file of a save is written.
    enum Temporary {
        /// Beside the suite (what our save did before issue 12 row 2, and does where the subdirectory
        /// cannot be used).
        case beside
        /// In this subdirectory of the suite's directory (created here; what our save does).
        case subdirectory(String)
        /// Unnamed (`O_TMPFILE`) in the suite's directory, linked under a temporary name before the rename.
        case unnamed
    }

    init(path: String, bytes: [UInt8], temporary: Temporary = .beside) {
        self.path = path
        self.bytes = bytes
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))!
        directory = String(path[..<slash])
        let name = String(path[path.utf8.index(after: slash)...])
        lockPath = directory + "/." + name + ".lock"
        switch temporary {
        case .beside, .unnamed:
            temporaryDirectory = directory
        case .subdirectory(let subdirectory):
            temporaryDirectory = directory + "/" + subdirectory
            mkdir(temporaryDirectory, 0o700)
        }
        if case .unnamed = temporary { unnamed = true } else { unnamed = false }
    }

    /// One save; returns a value for the checksum.
    func save() -> Int {
        var status = stat()
        guard stat(directory, &status) == 0 else { fail("stat \(directory): errno \(errno)") }
        _ = lstat(path, &status)
        let lock = open(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { fail("open \(lockPath): errno \(errno)") }
        _ = fstat(lock, &status)
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { fail("flock \(lockPath): errno \(errno)") }
        _ = fstat(lock, &status)
        _ = lstat(lockPath, &status)
        _ = stat(path, &status)
        _ = access(path, W_OK)
        if temporaryDirectory != directory { _ = lstat(temporaryDirectory, &status) }
        counter &+= 1
        let temporary = temporaryDirectory + "/.raw.\(getpid()).\(counter).tmp"
        let file =
            unnamed
            ? open(temporaryDirectory, Self.temporaryFileFlag | O_RDWR | O_CLOEXEC, 0o600)
            : open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { fail("open \(temporary): errno \(errno)") }
        let reader = unnamed ? dup(file) : open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        let written = bytes.withUnsafeBytes { write(file, $0.baseAddress!, $0.count) }
        guard written == bytes.count else { fail("write \(temporary): errno \(errno)") }
        _ = fstat(file, &status)
        if unnamed {
            guard linkat(AT_FDCWD, "/proc/self/fd/\(file)", AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) == 0 else {
                fail("linkat \(temporary): errno \(errno)")
            }
        }
        close(file)
        let directoryLock = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        _ = flock(directoryLock, LOCK_EX | LOCK_NB)
        _ = stat(path, &status)
        guard rename(temporary, path) == 0 else { fail("rename \(temporary): errno \(errno)") }
        _ = fstat(reader, &status)
        close(reader)
        close(directoryLock)
        close(lock)
        return Int(status.st_size)
    }
}

/// The floor of watching a directory: a thread that reads every inotify event of the directory (the
/// mask our watcher uses) and throws it away: what the kernel's wake-ups cost without any library code.
/// With `checking`, it also `stat`s that file at each event on its name: the least a watcher does to tell
/// its own process's save (a known inode) from another's, which an event alone does not say.
final class RawDirectoryWatcher: @unchecked Sendable {
    private let descriptor: Int32
    private let watch: Int32
    private let checkedName: [CChar]?
    private let checkedPath: String
    private var thread: Thread?
    private let stopped = NSCondition()
    private var running = true

    init(directory: String, checking name: String? = nil) {
        checkedName = name.map { Array($0.utf8CString) }
        checkedPath = directory + "/" + (name ?? "")
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { fail("inotify_init1: errno \(errno)") }
        let mask =
            IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
        watch = inotify_add_watch(descriptor, directory, UInt32(mask))
        guard watch >= 0 else { fail("inotify_add_watch \(directory): errno \(errno)") }
        let thread = Thread { [self] in readUntilStopped() }
        thread.name = "raw-inotify"
        self.thread = thread
        thread.start()
    }

    private func readUntilStopped() {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, 64 * 1024)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            // Removing the watch queues IN_IGNORED: the stop signal.
            var offset = 0
            var ended = false
            while offset < count {
                let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self).pointee
                if event.mask & UInt32(IN_IGNORED) != 0 { ended = true }
                if let checkedName, event.len > 0,
                    strcmp(
                        (buffer + offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self),
                        checkedName) == 0
                {
                    var status = stat()
                    _ = stat(checkedPath, &status)
                }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
            if ended { break }
        }
        stopped.lock()
        running = false
        stopped.signal()
        stopped.unlock()
    }

    /// Ends the reader thread and closes the inotify instance.
    func stop() {
        inotify_rm_watch(descriptor, watch)
        stopped.lock()
        while running { stopped.wait() }
        stopped.unlock()
        close(descriptor)
    }
}
