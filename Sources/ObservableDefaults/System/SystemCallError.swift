import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An `errno` value, named for the cases the library acts on.
struct Errno: RawRepresentable, Equatable, Hashable, Sendable {
    var rawValue: Int32

    init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    static var current: Errno { Errno(rawValue: errno) }

    static let noSuchFile = Errno(rawValue: ENOENT)
    static let notDirectory = Errno(rawValue: ENOTDIR)
    static let isDirectory = Errno(rawValue: EISDIR)
    static let exists = Errno(rawValue: EEXIST)
    static let interrupted = Errno(rawValue: EINTR)
    static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    static let tryAgain = Errno(rawValue: EAGAIN)
    static let accessDenied = Errno(rawValue: EACCES)
    static let notPermitted = Errno(rawValue: EPERM)
    static let symlinkLoop = Errno(rawValue: ELOOP)
    static let invalidArgument = Errno(rawValue: EINVAL)
    static let ioError = Errno(rawValue: EIO)
    static let badDescriptor = Errno(rawValue: EBADF)
    static let noSuchProcess = Errno(rawValue: ESRCH)
    static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    static let fileTableFull = Errno(rawValue: ENFILE)
    static let outOfMemory = Errno(rawValue: ENOMEM)
    static let noBufferSpace = Errno(rawValue: ENOBUFS)

    /// The path, or a directory on it, does not exist.
    var isMissingPath: Bool { self == .noSuchFile || self == .notDirectory }

    /// The call lacked a resource that may be free again later (a descriptor, memory) or was interrupted:
    /// the same call may succeed then, so what it failed on is not at fault.
    var isTransient: Bool {
        [.tooManyOpenFiles, .fileTableFull, .outOfMemory, .noBufferSpace, .tryAgain, .interrupted].contains(self)
    }
}

/// A system call that failed: which call, on what, and the `errno` it set.
struct SystemCallError: Error, Equatable, Sendable {
    /// The call's name, as in its manual page (`open`, `fstat`, `inotify_add_watch`).
    var call: String
    /// The path the call was made on; empty for calls on no path (`inotify_init1`, `pipe`, `poll`).
    var path: String
    var errno: Errno

    init(_ call: String, path: String, errno: Errno = .current) {
        self.call = call
        self.path = path
        self.errno = errno
    }
}

extension DefaultsError {
    /// The one place a failed system call becomes a library error: `what` says what the library was
    /// doing, followed by the call and its path (unless `what` names the path already) and, in the
    /// description, `strerror` of the `errno`.
    init(_ failure: SystemCallError, _ what: String, fileURL: URL?) {
        let detail =
            failure.path.isEmpty || what.contains(failure.path) ? failure.call : "\(failure.call) \(failure.path)"
        self.init(.fileSystem, message: "\(what) (\(detail))", fileURL: fileURL, errorNumber: failure.errno.rawValue)
    }
}

/// The `EINTR` retry, written once: calls `body` again while it fails with `-1` and `errno` `EINTR`.
/// Returns the result of the call that did not fail that way; `errno` is still its `errno`.
@inline(__always)
func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) -> Result {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// Runs a call returning `0` or `-1` (retrying on `EINTR`) and throws its `errno` as a ``SystemCallError``.
@inline(__always)
func checked(_ call: String, path: String, _ body: () -> Int32) throws(SystemCallError) {
    if retryingOnInterrupt(body) != 0 { throw SystemCallError(call, path: path) }
}

extension DefaultsError {
    /// A failed system call that lacked a resource that may be free again later (see ``Errno/isTransient``).
    var isTransient: Bool { kind == .fileSystem && errorNumber.map { Errno(rawValue: $0).isTransient } == true }
}
