import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file descriptor that this value owns: closed exactly once, when the value goes out of scope
/// (or by ``close()``). Non-copyable, so no copy can close it twice or use it after it was closed; it
/// costs nothing over a bare `Int32`.
struct FileDescriptor: ~Copyable, Sendable {
    /// How to open a file. `O_CLOEXEC` is always added: no descriptor of ours leaks into a child process.
    struct Options: OptionSet {
        var rawValue: Int32

        static let readOnly = Options([])
        static let writeOnly = Options(rawValue: O_WRONLY)
        static let readWrite = Options(rawValue: O_RDWR)
        static let create = Options(rawValue: O_CREAT)
        /// With ``create``: fail if the file exists.
        static let exclusive = Options(rawValue: O_EXCL)
        /// Every write goes to the end of the file, in one step with finding it (`O_APPEND`): writers in
        /// several processes never overwrite each other.
        static let append = Options(rawValue: O_APPEND)
        /// Empty an existing file on open.
        static let truncate = Options(rawValue: O_TRUNC)
        /// Fail (`ELOOP`) if the last component is a symlink.
        static let noFollow = Options(rawValue: O_NOFOLLOW)
        static let nonBlocking = Options(rawValue: O_NONBLOCK)
        /// Fail unless the path is a directory.
        static let directory = Options(rawValue: O_DIRECTORY)
    }

    let rawValue: Int32
    /// What the descriptor was opened on, for error messages.
    let path: String

    /// Takes ownership of `rawValue`.
    init(owning rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    /// `open(2)`; `mode` is used when ``Options/create`` makes the file.
    init(opening path: String, _ options: Options, mode: UInt32 = 0) throws(SystemCallError) {
        let raw = retryingOnInterrupt { open(path, options.rawValue | O_CLOEXEC, mode_t(mode)) }
        if raw < 0 { throw SystemCallError("open", path: path) }
        self.init(owning: raw, path: path)
    }

    deinit {
        // The descriptor is gone whatever `close` returns (Linux frees it even on `EINTR`); a failure
        // here has no one to report to and nothing to retry.
        _ = closeDescriptor(rawValue)
    }

    /// Closes now (the same as letting the value go out of scope).
    consuming func close() {}

    /// `fstat(2)`.
    func status() throws(SystemCallError) -> FileStatus {
        try FileStatus(descriptor: self, path: path)
    }

    /// Reads the whole file from the current offset, starting with a buffer of `expectedSize` bytes.
    func readAll(expectedSize: Int) throws(SystemCallError) -> Data {
        var bytes = Data(count: max(expectedSize, 0))
        var filled = 0
        let raw = rawValue
        while true {
            if filled == bytes.count { bytes.count += max(4096, bytes.count) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { read(raw, buffer.baseAddress! + filled, buffer.count - filled) }
            }
            if count < 0 { throw SystemCallError("read", path: path) }
            if count == 0 { break }
            filled += count
        }
        bytes.count = filled
        return bytes
    }

    /// One `read(2)` into `buffer`; returns the count, `0` at the end, `nil` when nothing is ready on a
    /// non-blocking descriptor.
    func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int? {
        let raw = rawValue
        let count = retryingOnInterrupt { read(raw, buffer.baseAddress, buffer.count) }
        if count >= 0 { return count }
        let error = Errno.current
        if error == .tryAgain || error == .wouldBlock { return nil }
        throw SystemCallError("read", path: path, errno: error)
    }

    /// Writes all of `bytes`, continuing after short writes.
    func writeAll<Bytes: ContiguousBytes>(_ bytes: Bytes) throws(SystemCallError) {
        let raw = rawValue
        let failure: Errno? = bytes.withUnsafeBytes { buffer -> Errno? in
            var written = 0
            while written < buffer.count {
                let count = retryingOnInterrupt { write(raw, buffer.baseAddress! + written, buffer.count - written) }
                if count < 0 { return .current }
                written += count
            }
            return nil
        }
        if let failure { throw SystemCallError("write", path: path, errno: failure) }
    }

    /// One `pread(2)` of up to `buffer.count` bytes from `offset` (the file offset is left alone); returns
    /// the count (short at the end of the file).
    func readSome(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        let raw = rawValue
        let count = retryingOnInterrupt { pread(raw, buffer.baseAddress, buffer.count, off_t(offset)) }
        if count < 0 { throw SystemCallError("pread", path: path) }
        return count
    }

    /// Writes all of `bytes` from `offset` with `pwrite(2)`, continuing after short writes.
    func writeAll<Bytes: ContiguousBytes>(_ bytes: Bytes, at offset: Int64) throws(SystemCallError) {
        let raw = rawValue
        let failure: Errno? = bytes.withUnsafeBytes { buffer -> Errno? in
            var written = 0
            while written < buffer.count {
                let count = retryingOnInterrupt {
                    pwrite(raw, buffer.baseAddress! + written, buffer.count - written, off_t(offset) + off_t(written))
                }
                if count < 0 { return .current }
                written += count
            }
            return nil
        }
        if let failure { throw SystemCallError("pwrite", path: path, errno: failure) }
    }

    /// `ftruncate(2)`: the file ends at `size` bytes.
    func truncate(to size: Int64) throws(SystemCallError) {
        let raw = rawValue
        try checked("ftruncate", path: path) { ftruncate(raw, off_t(size)) }
    }

    /// One `write(2)` of a byte that may find a full pipe (`false`) on a non-blocking descriptor.
    @discardableResult
    func writeByte(_ byte: UInt8) throws(SystemCallError) -> Bool {
        var byte = byte
        let raw = rawValue
        if retryingOnInterrupt({ write(raw, &byte, 1) }) == 1 { return true }
        let error = Errno.current
        if error == .tryAgain || error == .wouldBlock { return false }
        throw SystemCallError("write", path: path, errno: error)
    }

    /// `fchmod(2)`: sets the permission bits exactly (the umask does not apply).
    func setPermissions(_ permissions: UInt32) throws(SystemCallError) {
        let raw = rawValue
        try checked("fchmod", path: path) { fchmod(raw, mode_t(permissions)) }
    }

    /// `fchown(2)`.
    func setOwner(_ owner: UInt32, group: UInt32) throws(SystemCallError) {
        let raw = rawValue
        try checked("fchown", path: path) { fchown(raw, uid_t(owner), gid_t(group)) }
    }

    /// `fsync(2)`: the file's data and metadata reach the disk.
    func synchronize() throws(SystemCallError) {
        let raw = rawValue
        try checked("fsync", path: path) { fsync(raw) }
    }

    /// A non-blocking exclusive `flock(2)`: `false` when another open file description holds it.
    func tryLockExclusively() throws(SystemCallError) -> Bool {
        let raw = rawValue
        if retryingOnInterrupt({ flock(raw, LOCK_EX | LOCK_NB) }) == 0 { return true }
        let error = Errno.current
        if error == .wouldBlock { return false }
        throw SystemCallError("flock", path: path, errno: error)
    }
}

/// `close(2)` (a name of its own: inside ``FileDescriptor``, `close` is the method).
private func closeDescriptor(_ raw: Int32) -> Int32 {
    close(raw)
}
