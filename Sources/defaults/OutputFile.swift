import Foundation

/// Writes `export`'s bytes to a path the way a shell redirection would, without ever replacing anything
/// but a regular file.
///
/// - Symlinks are followed to their target (a dangling link creates its target); the link stays.
/// - A regular file (or a new one) is written atomically: a temporary file in the same directory, renamed
///   over the target, keeping an existing file's permission bits.
/// - A FIFO or a character device (`/dev/null`, a terminal) is opened and written in place.
/// - A path that resolves through `/proc` (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, a shell's
///   `>(…)`) names an open descriptor: it is opened and appended to in place, whatever it is.
/// - Directories, sockets and block devices are refused with a message naming the path.
enum OutputFile {
    /// Writes `bytes` to `path`.
    static func write(_ bytes: Data, to path: String) throws(ToolError) {
        let target = try resolve(path, original: path)
        switch target.kind {
        case .descriptor:
            try writeInPlace(bytes, to: target.path, flags: O_WRONLY | O_APPEND, original: path)
        case .stream:
            try writeInPlace(bytes, to: target.path, flags: O_WRONLY, original: path)
        case .regular(let mode):
            try replaceAtomically(target.path, with: bytes, mode: mode, original: path)
        }
    }

    private enum Kind {
        /// A FIFO or character device.
        case stream
        /// A regular file (its permission bits) or none yet (`nil`).
        case regular(mode_t?)
        /// A path through `/proc`: an open descriptor of this or another process.
        case descriptor
    }

    /// Follows symlinks one hop at a time (at most 40, like the kernel) to the entry that is written.
    private static func resolve(_ path: String, original: String) throws(ToolError) -> (path: String, kind: Kind) {
        var current = URL(fileURLWithPath: path).path
        for _ in 0..<40 {
            let url = URL(fileURLWithPath: current)
            let name = url.lastPathComponent
            guard let directory = realpath(url.deletingLastPathComponent().path) else {
                throw failure(original, "its directory \(url.deletingLastPathComponent().path) does not exist")
            }
            if directory == "/proc" || directory.hasPrefix("/proc/") { return (current, .descriptor) }
            let entry = directory == "/" ? "/" + name : directory + "/" + name
            var info = stat()
            guard lstat(entry, &info) == 0 else {
                guard errno == ENOENT else { throw failure(original, String(cString: strerror(errno))) }
                return (entry, .regular(nil))
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                guard let link = readLink(entry) else { throw failure(original, "cannot read the symlink \(entry)") }
                current = link.hasPrefix("/") ? link : directory + "/" + link
            case S_IFREG: return (entry, .regular(info.st_mode & 0o7777))
            case S_IFIFO, S_IFCHR: return (entry, .stream)
            case S_IFDIR: throw failure(original, "\(entry) is a directory")
            case S_IFSOCK:
                throw failure(original, "\(entry) is a socket; export writes files, FIFOs and character devices")
            default:
                throw failure(original, "\(entry) is a block device; export writes files, FIFOs and character devices")
            }
        }
        throw failure(original, "too many levels of symbolic links")
    }

    private static func writeInPlace(_ bytes: Data, to path: String, flags: Int32, original: String) throws(ToolError) {
        let descriptor = open(path, flags | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(original, String(cString: strerror(errno))) }
        defer { close(descriptor) }
        try writeAll(bytes, to: descriptor, original: original)
    }

    private static func replaceAtomically(_ path: String, with bytes: Data, mode: mode_t?, original: String)
        throws(ToolError)
    {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).export-\(getpid())-\(UInt32.random(in: 0 ... .max))")
            .path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode ?? 0o644)
        guard descriptor >= 0 else { throw failure(original, String(cString: strerror(errno))) }
        do throws(ToolError) {
            // The creation mode is filtered by the umask; an existing file keeps its exact bits.
            if let mode { fchmod(descriptor, mode) }
            try writeAll(bytes, to: descriptor, original: original)
            guard fsync(descriptor) == 0 else { throw failure(original, String(cString: strerror(errno))) }
            close(descriptor)
            guard rename(temporary, path) == 0 else { throw failure(original, String(cString: strerror(errno))) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
    }

    private static func writeAll(_ bytes: Data, to descriptor: Int32, original: String) throws(ToolError) {
        let result: Int32 = bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return errno == 0 ? EIO : errno }
                written += count
            }
            return 0
        }
        if result != 0 { throw failure(original, String(cString: strerror(result))) }
    }

    private static func realpath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func failure(_ path: String, _ reason: String) -> ToolError {
        ToolError("cannot export to \(path): \(reason); nothing was written")
    }
}
