import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The rules that keep other users of a shared directory from steering our writes.
///
/// - A suites directory writable by other users must be sticky (like `/tmp`): otherwise anyone could
///   replace or remove our suite and lock files, so writes there are refused.
/// - In a sticky directory writable by others, a symlink at the suite path is followed only when the
///   link belongs to us or to the directory's owner: the kernel's `protected_symlinks` rule. A link
///   another user planted would make us write our settings into a file they chose. In directories only
///   their owner can change (a Kubernetes ConfigMap volume, a dotfiles checkout), links are followed.
enum SuiteDirectoryPolicy {
    /// Throws unless suites may be written in `directory`; returns its `stat`.
    static func check(directory: String, fileURL: URL) throws(DefaultsError) -> stat {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw DefaultsError(.fileSystem, message: "cannot stat the suite's directory \(directory)", fileURL: fileURL, errorNumber: errno)
        }
        if info.st_mode & S_IWOTH != 0 && info.st_mode & S_ISVTX == 0 {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw DefaultsError(
                .fileSystem,
                message: "the suite's directory \(directory) is writable by other users and not sticky (mode \(mode)); refusing to write there (remove write access for others, or set the sticky bit)",
                fileURL: fileURL, errorNumber: EPERM)
        }
        return info
    }

    /// Throws unless the symlink `link` (its `lstat`) at `path` in a directory described by `directory`
    /// may be followed.
    static func checkSymlink(_ link: stat, at path: String, in directory: stat, fileURL: URL) throws(DefaultsError) {
        let othersMayWrite = directory.st_mode & S_IWOTH != 0
        if !othersMayWrite || link.st_uid == geteuid() || link.st_uid == directory.st_uid { return }
        throw DefaultsError(
            .fileSystem,
            message: "the suite file \(path) is a symlink owned by another user (uid \(link.st_uid)) in a directory others can write; refusing to follow it",
            fileURL: fileURL, errorNumber: EPERM)
    }
}
