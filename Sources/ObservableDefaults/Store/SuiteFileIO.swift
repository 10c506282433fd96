import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls behind a suite file: reading a snapshot, replacing it atomically, and the advisory
/// lock that serialises writers across processes.
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
    /// repository stays a symlink), else the path itself.
    static func writeTarget(for url: URL) -> URL {
        guard let resolved = realpath(url.path, nil) else { return url }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved), isDirectory: false)
    }

    /// Replaces `url` with `bytes` atomically: a temporary file in the same directory, then `rename`.
    /// A new file is created 0600; an existing file keeps its permission bits. With `synchronize`, the file
    /// and its directory are fsync'ed so the change survives power loss.
    /// - Returns: the identity of the new file.
    @discardableResult
    static func replace(_ url: URL, with bytes: Data, synchronize: Bool) throws(DefaultsError) -> FileIdentity {
        var existing = stat()
        let mode: mode_t = stat(url.path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o600
        if stat(url.path, &existing) == 0, (existing.st_mode & S_IFMT) == S_IFDIR {
            throw DefaultsError(.fileSystem, message: "the suite file is a directory; cannot replace it", fileURL: url, errorNumber: EISDIR)
        }
        let directory = url.deletingLastPathComponent().path
        let temporaryPath = directory + "/.\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            throw DefaultsError(.fileSystem, message: "cannot create a temporary file to write the suite", fileURL: url, errorNumber: errno)
        }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporaryPath) }
        }
        do {
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, url: url)
            if mode != 0o600 { fchmod(descriptor, mode) }
            if synchronize && fsync(descriptor) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot flush the suite file to disk", fileURL: url, errorNumber: errno)
            }
            if rename(temporaryPath, url.path) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot replace the suite file", fileURL: url, errorNumber: errno)
            }
            succeeded = true
            // Taken after the rename, which changes the file's ctime, so the identity matches what a later
            // stat of the path sees and our own write is recognised without re-reading it.
            guard let identity = FileIdentity.of(descriptor: descriptor) else {
                throw DefaultsError(.fileSystem, message: "cannot stat the written suite file", fileURL: url, errorNumber: errno)
            }
            if synchronize { synchronizeDirectory(directory) }
            return identity
        }
    }

    /// Removes temporary files that writers of `url` left behind when they were killed mid-write
    /// (`.<file name>.<pid>.<random>.tmp` whose process no longer exists).
    static func removeStaleTemporaryFiles(of url: URL) {
        let directory = url.deletingLastPathComponent().path
        let prefix = ".\(url.lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let fields = name.dropFirst(prefix.count).split(separator: ".")
            guard fields.count == 3, let pid = pid_t(fields[0]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(directory + "/" + name) }
        }
    }

    private static func writeAll(_ bytes: Data, to descriptor: Int32, url: URL) throws(DefaultsError) {
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

    /// Runs `body` holding an exclusive `flock` on the sidecar lock file `.<file name>.lock` beside `url`.
    /// Every process writing the suite takes this lock around its read-modify-write.
    static func withExclusiveLock<R>(beside url: URL, _ body: () throws(DefaultsError) -> R) throws(DefaultsError) -> R {
        let lockPath = url.deletingLastPathComponent().path + "/.\(url.lastPathComponent).lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            throw DefaultsError(.fileSystem, message: "cannot open the lock file \(lockPath)", fileURL: url, errorNumber: errno)
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            throw DefaultsError(.fileSystem, message: "cannot lock \(lockPath)", fileURL: url, errorNumber: errno)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
