import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The cross-process writers' lock of a suite: an exclusive `flock` on the sidecar file `.<file>.lock`.
///
/// The lock file is opened for each write and closed after it (an idle suite holds no descriptor), never
/// through a symlink (`O_NOFOLLOW`: a link planted at the lock path cannot make us create a file elsewhere),
/// and the wait for it is bounded. After the lock is taken, the locked inode is checked to still be the one
/// at the path: if someone removed or replaced the lock file meanwhile, another writer may be locking the
/// new file, so the lock is dropped and taken again on the file that is there now. A lock file removed
/// while held is covered by the commit lock (``withCommitLock(directory:fileURL:waitLimit:_:)``).
enum SuiteLock {
    /// How long a writer waits for the lock by default before giving up (the change stays pending and is
    /// retried later).
    static let defaultWaitLimit: Duration = .seconds(1)

    /// Runs `body` holding the lock at `lockPath`, waiting at most `waitLimit` for it.
    /// - Throws: a ``DefaultsError`` naming the lock file (and the process holding it, when `/proc/locks`
    ///   tells) when the wait times out, or when the lock file cannot be opened.
    static func withLock<R>(
        at lockPath: String, fileURL: URL, waitLimit: Duration, _ body: () throws(DefaultsError) -> R
    ) throws(DefaultsError) -> R {
        let descriptor = try acquire(lockPath, fileURL: fileURL, waitLimit: waitLimit)
        // Closing the descriptor releases the lock.
        defer { close(descriptor) }
        return try body()
    }

    /// Runs `body`, the commit of a write (checking that the file is still the version read, then
    /// renaming the new one over it), holding an exclusive `flock` on the suite's directory.
    ///
    /// The lock file serialises whole read-modify-writes, but anyone who can write the directory can
    /// remove or replace it while writers hold it, and then two writers run at once. Committing under
    /// the directory's lock (which cannot be removed from under us) makes the check and the rename one
    /// step for them: the second sees the first's file and starts over, so neither loses the other's
    /// changes. It is held for two system calls, so suites sharing the directory barely wait for it.
    static func withCommitLock<R>(
        directory: String, fileURL: URL, waitLimit: Duration, _ body: () throws(DefaultsError) -> R
    ) throws(DefaultsError) -> R {
        let descriptor = systemOpen(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 {
            throw DefaultsError(.fileSystem, message: "cannot open the suite's directory \(directory) to lock it", fileURL: fileURL, errorNumber: errno)
        }
        defer { close(descriptor) }
        guard try lock(descriptor, path: directory, fileURL: fileURL, until: ContinuousClock.now + waitLimit) else {
            throw DefaultsError(
                .fileSystem,
                message: "timed out after \(waitLimit) waiting for the lock on the directory \(directory)\(holderDescription(of: descriptor)); the change stays pending and is retried",
                fileURL: fileURL, errorNumber: EWOULDBLOCK)
        }
        return try body()
    }

    /// Opens and locks the lock file; returns the locked descriptor.
    static func acquire(_ lockPath: String, fileURL: URL, waitLimit: Duration) throws(DefaultsError) -> Int32 {
        let deadline = ContinuousClock.now + waitLimit
        while true {
            let descriptor = try openLockFile(lockPath, fileURL: fileURL)
            let locked: Bool
            do {
                locked = try lock(descriptor, path: lockPath, fileURL: fileURL, until: deadline)
            } catch {
                close(descriptor)
                throw error
            }
            guard locked else {
                let holder = holderDescription(of: descriptor)
                close(descriptor)
                throw DefaultsError(
                    .fileSystem,
                    message: "timed out after \(waitLimit) waiting for the lock file \(lockPath)\(holder); the change stays pending and is retried",
                    fileURL: fileURL, errorNumber: EWOULDBLOCK)
            }
            if isStillAtPath(descriptor, lockPath) { return descriptor }
            close(descriptor)
        }
    }

    /// Opens (creating 0600) the lock file, read-only: `flock` needs no write access, so a lock file made
    /// read-only by an extreme umask or owned by another user of a shared suite still works. Non-blocking,
    /// so a FIFO planted at the path cannot stall the open; anything but a regular file is refused.
    private static func openLockFile(_ lockPath: String, fileURL: URL) throws(DefaultsError) -> Int32 {
        var descriptor = systemOpen(lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if descriptor < 0 && errno == ENOENT {
            descriptor = systemOpen(lockPath, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            if descriptor >= 0 {
                fchmod(descriptor, 0o600)
            } else if errno == EEXIST {
                descriptor = systemOpen(lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            }
        }
        if descriptor < 0 {
            let error = errno
            let reason = error == ELOOP ? "the lock file \(lockPath) is a symlink; refusing to follow it" : "cannot open the lock file \(lockPath)"
            throw DefaultsError(.fileSystem, message: reason, fileURL: fileURL, errorNumber: error)
        }
        var info = stat()
        if fstat(descriptor, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
            close(descriptor)
            let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            throw DefaultsError(.fileSystem, message: "the lock file \(lockPath) is not a regular file", fileURL: fileURL, errorNumber: isDirectory ? EISDIR : EINVAL)
        }
        return descriptor
    }

    /// Polls a non-blocking `flock` with a growing pause (1 ms to 50 ms) until `deadline`.
    /// - Returns: whether the lock was taken.
    private static func lock(_ descriptor: Int32, path: String, fileURL: URL, until deadline: ContinuousClock.Instant) throws(DefaultsError) -> Bool {
        var pause: UInt32 = 1_000
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK else {
                throw DefaultsError(.fileSystem, message: "cannot lock \(path)", fileURL: fileURL, errorNumber: error)
            }
            if ContinuousClock.now >= deadline { return false }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        return true
    }

    /// Whether the locked file is still the file at `path` (not removed, replaced or re-pointed meanwhile).
    private static func isStillAtPath(_ descriptor: Int32, _ path: String) -> Bool {
        var locked = stat(), current = stat()
        guard fstat(descriptor, &locked) == 0, lstat(path, &current) == 0 else { return false }
        return locked.st_dev == current.st_dev && locked.st_ino == current.st_ino
    }

    /// ` (held by process 123, defaults-test-a)` from `/proc/locks`, or `""` when it cannot be known.
    static func holderDescription(of descriptor: Int32) -> String {
        var info = stat()
        guard fstat(descriptor, &info) == 0,
              let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return "" }
        // Matched by inode only: on overlay file systems the device in `/proc/locks` is not `st_dev`.
        let inode = ":\(info.st_ino)"
        // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; blocked waiters are marked "->".
        for line in table.split(separator: "\n") where !line.contains("->") {
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].hasSuffix(inode), let pid = Int32(fields[4]) else { continue }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return " (held by process \(pid)\(name.map { ", \($0)" } ?? ""))"
        }
        return ""
    }
}

/// `open(2)` (a name of its own: inside ``SuiteLock``, `open` is taken).
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    open(path, flags, mode)
}
