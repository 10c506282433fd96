import Foundation

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
    static func check(directory: String, fileURL: URL) throws(DefaultsError) -> FileStatus {
        let info: FileStatus
        do {
            info = try FileStatus(path: directory)
        } catch {
            throw DefaultsError(error, "cannot stat the suite's directory \(directory)", fileURL: fileURL)
        }
        if info.isWritableByOthers && !info.isSticky {
            let mode = String(info.permissions, radix: 8)
            throw DefaultsError(
                .fileSystem,
                message:
                    "the suite's directory \(directory) is writable by other users and not sticky (mode \(mode)); refusing to write there (remove write access for others, or set the sticky bit)",
                fileURL: fileURL, errorNumber: Errno.notPermitted.rawValue)
        }
        return info
    }

    /// Throws unless the symlink `link` (its `lstat`) at `path` in a directory described by `directory`
    /// may be followed.
    static func checkSymlink(_ link: FileStatus, at path: String, in directory: FileStatus, fileURL: URL)
        throws(DefaultsError)
    {
        if !directory.isWritableByOthers || link.owner == CurrentProcess.effectiveUser || link.owner == directory.owner
        {
            return
        }
        throw DefaultsError(
            .fileSystem,
            message:
                "the suite file \(path) is a symlink owned by another user (uid \(link.owner)) in a directory others can write; refusing to follow it",
            fileURL: fileURL, errorNumber: Errno.notPermitted.rawValue)
    }
}
