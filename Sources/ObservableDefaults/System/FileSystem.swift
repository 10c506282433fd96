#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// System calls on paths (rather than open files).
enum FileSystem {
    /// `rename(2)`: atomically puts `source` in place of `destination`.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        try checked("rename", path: destination) { renameFile(source, destination) }
    }

    /// Renames `source` to `destination`, or to `destination.2`, `.3`, … when something is there
    /// already, so what an earlier move put there is kept; returns where it went. (Checked with `lstat`
    /// first: not atomic against another process moving to the same name at the same moment.)
    static func moveAside(_ source: String, to destination: String) throws(SystemCallError) -> String {
        var target = destination
        var number = 1
        while (try? FileStatus(linkAt: target)) != nil {
            number += 1
            guard number <= 1000 else { throw SystemCallError("rename", path: destination, errno: .exists) }
            target = "\(destination).\(number)"
        }
        try rename(source, to: target)
        return target
    }

    /// `unlink(2)`.
    static func removeFile(_ path: String) throws(SystemCallError) {
        try checked("unlink", path: path) { unlink(path) }
    }

    /// `mkdir(2)` with exactly `permissions` (the umask may narrow what `mkdir` makes, so `chmod`
    /// follows). Throws ``Errno/exists`` when something is at `path` already.
    static func makeDirectory(_ path: String, permissions: UInt32) throws(SystemCallError) {
        try checked("mkdir", path: path) { mkdir(path, mode_t(permissions)) }
        try checked("chmod", path: path) { chmod(path, mode_t(permissions)) }
    }

    /// `realpath(3)`: the path with every symlink resolved.
    static func resolvedPath(_ path: String) throws(SystemCallError) -> String {
        guard let resolved = realpath(path, nil) else { throw SystemCallError("realpath", path: path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` itself is a symlink (`lstat`; `false` when there is nothing there).
    static func isSymlink(_ path: String) -> Bool {
        (try? FileStatus(linkAt: path))?.kind == .symlink
    }

    /// The final target of `path` when it is a symlink (`realpath`), `path` itself otherwise or when the
    /// link cannot be resolved (dangling). Only a last component that is a link needs resolving (one
    /// `lstat` in the common case); a symlinked directory above it leads to the same directory either way.
    static func symlinkTarget(of path: String) -> String {
        guard isSymlink(path) else { return path }
        return (try? resolvedPath(path)) ?? path
    }

    /// Whether this process may write `path` by its effective ids (`faccessat` with `AT_EACCESS`).
    static func isWritable(_ path: String) -> Bool {
        faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0
    }

    /// `fsync(2)` of a directory, so a rename in it survives power loss.
    static func synchronizeDirectory(_ path: String) throws(SystemCallError) {
        let directory = try FileDescriptor(opening: path, .directory)
        try directory.synchronize()
    }
}

/// Facts about this process and others.
enum CurrentProcess {
    static var id: Int32 { getpid() }
    static var effectiveUser: UInt32 { UInt32(geteuid()) }
    static var effectiveGroup: UInt32 { UInt32(getegid()) }
    static var isRoot: Bool { geteuid() == 0 }

    /// Whether process `pid` is known to be gone (`kill(pid, 0)` fails with `ESRCH`); a process we may
    /// not signal still exists.
    static func hasEnded(_ pid: Int32) -> Bool {
        kill(pid, 0) != 0 && Errno.current == .noSuchProcess
    }

    /// Registers `handler` to run when the process exits normally (`atexit(3)`).
    static func runAtExit(_ handler: @escaping @convention(c) () -> Void) {
        // Fails only when the table of handlers is full; the handler is a last attempt to save changes,
        // and a program with that many has bigger problems than a missed one.
        _ = atexit(handler)
    }

    /// Sleeps the calling thread for `microseconds`.
    static func pause(microseconds: UInt32) {
        usleep(microseconds)
    }
}

/// `rename(2)` (a name of its own: inside ``FileSystem``, `rename` is the method).
private func renameFile(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
