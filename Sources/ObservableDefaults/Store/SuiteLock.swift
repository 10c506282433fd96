import Foundation

/// The cross-process writers' lock of a suite: an exclusive `flock` on the sidecar file `.<file>.lock`.
///
/// The lock file is opened for each write and closed after it (an idle suite holds no descriptor), never
/// through a symlink (`O_NOFOLLOW`: a link planted at the lock path cannot make us create a file elsewhere),
/// and the wait for it is bounded (see ``LockWait``). After the lock is taken, the locked inode is checked
/// to still be the one at the path: if someone removed or replaced the lock file meanwhile, another writer
/// may be locking the new file, so the lock is dropped and taken again on the file that is there now. A lock file removed
/// while held is covered by the commit lock (``withCommitLock(directory:fileURL:waitLimit:_:)``).
enum SuiteLock {
    /// How long a writer waits for the lock by default with no write landing before giving up (the change
    /// stays pending and is retried later).
    static let defaultWaitLimit: Duration = .seconds(1)

    /// Runs `body` holding the lock at `lockPath`, the lock of the suite file at `filePath`, waiting for it
    /// as long as the file keeps changing and at most `waitLimit` after it stopped (see ``LockWait``).
    /// - Throws: a ``DefaultsError`` naming the lock file (and the process holding it, when `/proc/locks`
    ///   tells) when the wait times out, or when the lock file cannot be opened.
    static func withLock<R>(
        at lockPath: String, of filePath: String, fileURL: URL, waitLimit: Duration,
        _ body: () throws(DefaultsError) -> R
    ) throws(DefaultsError) -> R {
        // Closing the descriptor (at the end of this scope) releases the lock.
        let lock = try acquire(lockPath, fileURL: fileURL, wait: LockWait(limit: waitLimit, progressAt: filePath))
        return try withExtendedLifetime(lock) { () throws(DefaultsError) in try body() }
    }

    /// Runs `body`, the commit of a write (checking that the file is still the version read, then
    /// renaming the new one over it), holding an exclusive `flock` on the suite's directory.
    ///
    /// The lock file serialises whole read-modify-writes, but anyone who can write the directory can
    /// remove or replace it while writers hold it, and then two writers run at once. Committing under
    /// the directory's lock (which cannot be removed from under us) makes the check and the rename one
    /// step for them: the second sees the first's file and starts over, so neither loses the other's
    /// changes. It is held for two system calls, so suites sharing the directory barely wait for it; but
    /// every writer of every suite in the directory takes it, so the wait is bounded by the directory's
    /// progress (its change time moves with every commit in it), not by one suite's.
    static func withCommitLock<R>(
        directory: String, fileURL: URL, waitLimit: Duration, _ body: () throws(DefaultsError) -> R
    ) throws(DefaultsError) -> R {
        let lock: FileDescriptor
        do {
            lock = try FileDescriptor(opening: directory, .directory)
        } catch {
            throw DefaultsError(error, "cannot open the suite's directory \(directory) to lock it", fileURL: fileURL)
        }
        var wait = LockWait(limit: waitLimit, progressAt: directory)
        guard try Self.lock(lock, fileURL: fileURL, wait: &wait) else {
            throw DefaultsError(
                .fileSystem,
                message:
                    "timed out after \(waitLimit) waiting for the lock on the directory \(directory)\(holderDescription(of: lock)); the change stays pending and is retried",
                fileURL: fileURL, errorNumber: Errno.wouldBlock.rawValue)
        }
        return try withExtendedLifetime(lock) { () throws(DefaultsError) in try body() }
    }

    /// Opens and locks the lock file; returns the locked descriptor.
    static func acquire(_ lockPath: String, fileURL: URL, wait: LockWait) throws(DefaultsError) -> FileDescriptor {
        var wait = wait
        while true {
            let lock = try openLockFile(lockPath, fileURL: fileURL)
            guard try Self.lock(lock, fileURL: fileURL, wait: &wait) else {
                throw DefaultsError(
                    .fileSystem,
                    message:
                        "timed out after \(wait.limit) waiting for the lock file \(lockPath)\(holderDescription(of: lock)); the change stays pending and is retried",
                    fileURL: fileURL, errorNumber: Errno.wouldBlock.rawValue)
            }
            if isStillAtPath(lock, lockPath) { return lock }
        }
    }

    /// Opens (creating 0600) the lock file, read-only: `flock` needs no write access, so a lock file made
    /// read-only by an extreme umask or owned by another user of a shared suite still works. Non-blocking,
    /// so a FIFO planted at the path cannot stall the open; anything but a regular file is refused.
    private static func openLockFile(_ lockPath: String, fileURL: URL) throws(DefaultsError) -> FileDescriptor {
        let lock: FileDescriptor
        do {
            lock = try openOrCreate(lockPath)
        } catch {
            let reason =
                error.errno == .symlinkLoop
                ? "the lock file \(lockPath) is a symlink; refusing to follow it"
                : "cannot open the lock file \(lockPath)"
            throw DefaultsError(error, reason, fileURL: fileURL)
        }
        let status = try? lock.status()
        guard let status, status.kind == .regular else {
            let isDirectory = status?.kind == .directory
            throw DefaultsError(
                .fileSystem, message: "the lock file \(lockPath) is not a regular file", fileURL: fileURL,
                errorNumber: (isDirectory ? Errno.isDirectory : .invalidArgument).rawValue)
        }
        return lock
    }

    /// Opens the lock file, creating it exactly 0600 when it does not exist (another writer may create
    /// it at the same moment).
    private static func openOrCreate(_ lockPath: String) throws(SystemCallError) -> FileDescriptor {
        let options: FileDescriptor.Options = [.readOnly, .noFollow, .nonBlocking]
        do {
            return try FileDescriptor(opening: lockPath, options)
        } catch  where error.errno == .noSuchFile {
            do {
                let created = try FileDescriptor(opening: lockPath, options.union([.create, .exclusive]), mode: 0o600)
                try created.setPermissions(0o600)
                return created
            } catch  where error.errno == .exists {
                return try FileDescriptor(opening: lockPath, options)
            }
        }
    }

    /// Polls a non-blocking `flock` with a growing pause (1 ms to 50 ms) until `wait` is over.
    /// - Returns: whether the lock was taken.
    private static func lock(_ descriptor: borrowing FileDescriptor, fileURL: URL, wait: inout LockWait)
        throws(DefaultsError) -> Bool
    {
        var pause: UInt32 = 1_000
        while true {
            do {
                if try descriptor.tryLockExclusively() { return true }
            } catch {
                throw DefaultsError(error, "cannot lock \(descriptor.path)", fileURL: fileURL)
            }
            if wait.isOver() { return false }
            CurrentProcess.pause(microseconds: pause)
            pause = min(pause * 2, 50_000)
        }
    }

    /// Whether the locked file is still the file at `path` (not removed, replaced or re-pointed meanwhile).
    private static func isStillAtPath(_ descriptor: borrowing FileDescriptor, _ path: String) -> Bool {
        guard let locked = try? descriptor.status(), let current = try? FileStatus(linkAt: path) else { return false }
        return locked.node == current.node
    }

    /// ` (held by process 123, defaults-test-a)` from `/proc/locks`, or `""` when it cannot be known.
    static func holderDescription(of descriptor: borrowing FileDescriptor) -> String {
        // Read to its end: `String(contentsOfFile:)` stops after the first page of a /proc file (76 of 1,500
        // locks), and on a busy machine the holder's line is further down.
        guard let status = try? descriptor.status(),
            let data = FileHandle(forReadingAtPath: "/proc/locks")?.readDataToEndOfFile()
        else { return "" }
        let table = String(decoding: data, as: UTF8.self)
        // Matched by inode only: on overlay file systems the device in `/proc/locks` is not `st_dev`.
        let inode = ":\(status.node.inode)"
        // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; blocked waiters are marked "->".
        for line in table.split(separator: "\n") where !line.contains("->") {
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].hasSuffix(inode), let pid = Int32(fields[4]) else {
                continue
            }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return " (held by process \(pid)\(name.map { ", \($0)" } ?? ""))"
        }
        return ""
    }
}
