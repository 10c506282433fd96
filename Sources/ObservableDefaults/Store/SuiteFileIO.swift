import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls behind a suite file: reading a snapshot and replacing it atomically. Writers hold
/// the suite's ``SuiteLock`` around a replacement.
enum SuiteFileIO {
    /// The bytes of a file together with the identity of exactly the version read.
    struct Snapshot {
        var bytes: Data
        var identity: FileIdentity
    }

    /// Reads the whole file, or returns `nil` when it does not exist.
    static func readSnapshot(_ url: URL) throws(DefaultsError) -> Snapshot? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw DefaultsError(.fileSystem, message: "cannot open the suite file for reading", fileURL: url, errorNumber: errno)
        }
        defer { close(descriptor) }
        guard let identity = FileIdentity.of(descriptor: descriptor) else {
            throw DefaultsError(.fileSystem, message: "cannot stat the suite file", fileURL: url, errorNumber: errno)
        }
        var info = stat()
        fstat(descriptor, &info)
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw DefaultsError(.fileSystem, message: "the suite file is a directory; expected a JSON or property list file", fileURL: url, errorNumber: EISDIR)
        }
        var bytes = Data(count: max(Int(identity.size), 0))
        var filled = 0
        while true {
            if filled == bytes.count { bytes.count += max(4096, bytes.count) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw DefaultsError(.fileSystem, message: "cannot read the suite file", fileURL: url, errorNumber: errno)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.count = filled
        return Snapshot(bytes: bytes, identity: identity)
    }

    /// The path writes go to: the final target of a symlinked suite file (so a symlink to a dotfiles
    /// repository stays a symlink), else the path itself. The watcher uses it to watch the right directory.
    static func writeTarget(for url: URL) -> URL {
        let path = url.path
        let target = writeTargetPath(for: path)
        return target == path ? url : URL(fileURLWithPath: target, isDirectory: false)
    }

    /// ``writeTarget(for:)`` on paths. Only a suite file that is itself a symlink needs resolving (one
    /// `lstat`; the common case); a symlinked directory above it leads to the same directory either way.
    static func writeTargetPath(for path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return path }
        return resolvedPath(path) ?? path
    }

    private static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The sidecar paths a write of the suite file at `path` uses, after the checks that keep other users
    /// from steering the write (see ``SuiteDirectoryPolicy``): the suite's directory must not be writable
    /// by other users unless it is sticky, and a symlink at the suite path is followed only where the
    /// kernel's `protected_symlinks` rule would follow it.
    static func checkedWritePaths(for path: String, fileURL: URL) throws(DefaultsError) -> SidecarPaths {
        let linkPaths = SidecarPaths(file: path)
        let directory = try SuiteDirectoryPolicy.check(directory: linkPaths.directory, fileURL: fileURL)
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return linkPaths }
        try SuiteDirectoryPolicy.checkSymlink(info, at: path, in: directory, fileURL: fileURL)
        guard let target = resolvedPath(path) else { return linkPaths }
        let targetPaths = SidecarPaths(file: target)
        if targetPaths.directory != linkPaths.directory {
            _ = try SuiteDirectoryPolicy.check(directory: targetPaths.directory, fileURL: fileURL)
        }
        return targetPaths
    }

    /// The sidecar paths beside a suite file, made with string operations (no `URL` work per write).
    struct SidecarPaths {
        /// The suite file.
        var file: String
        /// Its directory.
        var directory: String
        /// Its last path component.
        var name: String

        init(file: String) {
            self.file = file
            if let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) {
                let directory = String(file[..<slash])
                self.directory = directory.isEmpty ? "/" : directory
                name = String(file[file.utf8.index(after: slash)...])
            } else {
                directory = "."
                name = file
            }
        }

        /// `.<name>.lock`, the `flock` every writer of the file takes.
        var lock: String { directory + "/." + name + ".lock" }

        var url: URL { URL(fileURLWithPath: file, isDirectory: false) }
    }

    /// What the longest sidecar name adds to the suite file's name: the temporary file
    /// `.<name>.<pid>.<n>.tmp`, with a pid of up to 7 digits (`pid_max` is at most 2^22) and a 32-bit `n`.
    static let longestSidecarOverhead = 1 + 1 + 7 + 1 + 10 + 4

    /// Distinguishes this process's temporary files: drawn at random once, then counted up (one
    /// `getrandom` per process instead of one per write).
    private static let temporaryCounter = Atomic<UInt32>(UInt32.random(in: 0 ... .max))

    /// A new temporary file name beside the suite file, unique even among writers that run at the same
    /// time (the lock file may have been removed under them). A writer killed mid-write leaves it behind;
    /// ``StaleTemporaryFiles`` removes those.
    private static func temporaryPath(for paths: SidecarPaths) -> String {
        let unique = temporaryCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        return paths.directory + "/.\(paths.name).\(getpid()).\(unique).tmp"
    }

    /// Replaces the file with `bytes` atomically: a temporary file in the same directory, then `rename`.
    /// Must be called holding the suite's ``SuiteLock``; the rename itself is committed under the
    /// directory's lock (see ``SuiteLock/withCommitLock(directory:fileURL:waitLimit:_:)``).
    ///
    /// A new file is created with exactly 0600 whatever the umask; an existing file keeps its permission
    /// bits and, where we may set them (as root, or a group we are in), its owner and group. An existing
    /// file without write permission is not replaced: the write fails with `EACCES`, as in an editor (also
    /// for root, who would otherwise bypass the bits). With `synchronize`, the file and its directory are
    /// fsync'ed so the change survives power loss. `existing` is the file's `stat` when the caller has just
    /// taken it, saving another.
    /// - Returns: the identity of the new file.
    @discardableResult
    static func replace<Bytes: ContiguousBytes>(
        _ paths: SidecarPaths, with bytes: Bytes, existing: stat?, synchronize: Bool, lockWaitLimit: Duration
    ) throws(DefaultsError) -> FileIdentity {
        var existing = existing
        if existing == nil {
            var info = stat()
            if stat(paths.file, &info) == 0 { existing = info }
        }
        if let existing {
            try checkReplaceable(existing, paths)
        }
        let mode: mode_t = existing.map { $0.st_mode & 0o7777 } ?? 0o600
        let temporaryPath = temporaryPath(for: paths)
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 {
            throw DefaultsError(.fileSystem, message: "cannot create the temporary file \(temporaryPath) to write the suite", fileURL: paths.url, errorNumber: errno)
        }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporaryPath) }
        }
        do {
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, url: paths.url)
            if let existing, existing.st_uid != geteuid() || existing.st_gid != getegid() {
                // Fails harmlessly (EPERM) when we may not give the file away; it is then ours.
                _ = fchown(descriptor, existing.st_uid, existing.st_gid)
            }
            // After `fchown`, which clears set-id bits; explicit, so the umask cannot narrow the mode.
            if fchmod(descriptor, mode) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot set the permissions of the temporary file \(temporaryPath)", fileURL: paths.url, errorNumber: errno)
            }
            if synchronize && fsync(descriptor) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot flush the suite file to disk", fileURL: paths.url, errorNumber: errno)
            }
            // Only the lock holder writes, but someone may remove or replace the lock file while we hold
            // it; a writer that locked the new one may have replaced the file since we read it, and our
            // contents would drop its changes. Then the caller reads the file again and starts over.
            try SuiteLock.withCommitLock(directory: paths.directory, fileURL: paths.url, waitLimit: lockWaitLimit) { () throws(DefaultsError) in
                if FileIdentity.of(path: paths.file) != existing.map(FileIdentity.init) {
                    throw changedUnderneath
                }
                if rename(temporaryPath, paths.file) != 0 {
                    throw DefaultsError(.fileSystem, message: "cannot replace the suite file", fileURL: paths.url, errorNumber: errno)
                }
            }
            succeeded = true
            // Taken after the rename, which changes the file's ctime, so the identity matches what a later
            // stat of the path sees and our own write is recognised without re-reading it.
            guard let identity = FileIdentity.of(descriptor: descriptor) else {
                throw DefaultsError(.fileSystem, message: "cannot stat the written suite file", fileURL: paths.url, errorNumber: errno)
            }
            if synchronize { synchronizeDirectory(paths.directory) }
            return identity
        }
    }

    /// Thrown by ``replace(_:with:existing:synchronize:)`` when the file is no longer the version the
    /// new contents were made from; the write starts over.
    static let changedUnderneath = DefaultsError(.fileSystem, message: "the suite file changed while it was being written", errorNumber: EAGAIN)

    /// Throws unless the existing file may be replaced: not a directory, and writable. The mode bits are
    /// checked explicitly because root's access checks ignore them.
    private static func checkReplaceable(_ existing: stat, _ paths: SidecarPaths) throws(DefaultsError) {
        if (existing.st_mode & S_IFMT) == S_IFDIR {
            throw DefaultsError(.fileSystem, message: "the suite file is a directory; cannot replace it", fileURL: paths.url, errorNumber: EISDIR)
        }
        let writable: Bool
        if geteuid() == 0 {
            writable = existing.st_mode & 0o222 != 0
        } else {
            writable = faccessat(AT_FDCWD, paths.file, W_OK, AT_EACCESS) == 0
        }
        if !writable {
            let mode = String(existing.st_mode & 0o7777, radix: 8)
            throw DefaultsError(.fileSystem, message: "the suite file is read-only (mode \(mode)); refusing to replace it", fileURL: paths.url, errorNumber: EACCES)
        }
    }

    private static func writeAll<Bytes: ContiguousBytes>(_ bytes: Bytes, to descriptor: Int32, url: URL) throws(DefaultsError) {
        let failure: Int32? = bytes.withUnsafeBytes { buffer -> Int32? in
            var written = 0
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return nil
        }
        if let failure {
            throw DefaultsError(.fileSystem, message: "cannot write the suite file", fileURL: url, errorNumber: failure)
        }
    }

    private static func synchronizeDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
