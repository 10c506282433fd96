import Foundation
import Synchronization

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
        let path = url.path
        let target = writeTargetPath(for: path)
        return target == path ? url : URL(fileURLWithPath: target, isDirectory: false)
    }

    /// ``writeTarget(for:)`` on paths. Only a suite file that is itself a symlink needs resolving (one
    /// `lstat`; the common case); a symlinked directory above it leads to the same directory either way.
    static func writeTargetPath(for path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return path }
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
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

    /// Distinguishes this process's temporary files: drawn at random once, then counted up (one
    /// `getrandom` per process instead of one per write).
    private static let temporaryCounter = Atomic<UInt32>(UInt32.random(in: 0 ... .max))

    /// Replaces the file with `bytes` atomically: a temporary file in the same directory, then `rename`.
    /// A new file is created 0600; an existing file keeps its permission bits. With `synchronize`, the file
    /// and its directory are fsync'ed so the change survives power loss. `existing` is the file's `stat`
    /// when the caller has just taken it (under the writers' lock), saving another.
    /// - Returns: the identity of the new file.
    @discardableResult
    static func replace<Bytes: ContiguousBytes>(
        _ paths: SidecarPaths, with bytes: Bytes, existing: stat?, synchronize: Bool
    ) throws(DefaultsError) -> FileIdentity {
        var existing = existing
        if existing == nil {
            var info = stat()
            if stat(paths.file, &info) == 0 { existing = info }
        }
        if let existing, (existing.st_mode & S_IFMT) == S_IFDIR {
            throw DefaultsError(.fileSystem, message: "the suite file is a directory; cannot replace it", fileURL: paths.url, errorNumber: EISDIR)
        }
        let mode: mode_t = existing.map { $0.st_mode & 0o7777 } ?? 0o600
        let unique = temporaryCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let temporaryPath = paths.directory + "/.\(paths.name).\(getpid()).\(unique).tmp"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            throw DefaultsError(.fileSystem, message: "cannot create a temporary file to write the suite", fileURL: paths.url, errorNumber: errno)
        }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporaryPath) }
        }
        do {
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, url: paths.url)
            if mode != 0o600 { fchmod(descriptor, mode) }
            if synchronize && fsync(descriptor) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot flush the suite file to disk", fileURL: paths.url, errorNumber: errno)
            }
            if rename(temporaryPath, paths.file) != 0 {
                throw DefaultsError(.fileSystem, message: "cannot replace the suite file", fileURL: paths.url, errorNumber: errno)
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

    /// Runs `body` holding an exclusive `flock` on the sidecar lock file `.<file name>.lock` beside the
    /// file. Every process writing the suite takes this lock around its read-modify-write.
    ///
    /// The lock file stays open in `lockFile` between writes, so a write does not pay for opening it.
    /// It is opened again when the path changes (a re-pointed symlink) or when the open file is no
    /// longer linked (the lock file is never deleted, but if its directory was removed and made again, a
    /// kept descriptor would lock an inode no other writer locks).
    static func withExclusiveLock<R>(
        beside paths: SidecarPaths, keeping lockFile: inout OpenLockFile?, _ body: () throws(DefaultsError) -> R
    ) throws(DefaultsError) -> R {
        let lockPath = paths.lock
        while true {
            if lockFile?.path != lockPath { lockFile = nil }
            if lockFile == nil {
                let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
                if descriptor < 0 {
                    throw DefaultsError(.fileSystem, message: "cannot open the lock file \(lockPath)", fileURL: paths.url, errorNumber: errno)
                }
                lockFile = OpenLockFile(path: lockPath, descriptor: descriptor)
            }
            let descriptor = lockFile!.descriptor
            while flock(descriptor, LOCK_EX) != 0 {
                if errno == EINTR { continue }
                let error = errno
                lockFile = nil
                throw DefaultsError(.fileSystem, message: "cannot lock \(lockPath)", fileURL: paths.url, errorNumber: error)
            }
            var info = stat()
            if fstat(descriptor, &info) == 0 && info.st_nlink == 0 {
                flock(descriptor, LOCK_UN)
                lockFile = nil
                continue
            }
            defer { flock(descriptor, LOCK_UN) }
            return try body()
        }
    }

    /// An open sidecar lock file; closed when released.
    final class OpenLockFile: Sendable {
        let path: String
        let descriptor: Int32

        init(path: String, descriptor: Int32) {
            self.path = path
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }
}
