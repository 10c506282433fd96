#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What identifies one version of a file on disk: device, inode, size and change times.
///
/// A replaced file (rename-over) has a new inode; an edited one a new size or modification time. Equal
/// identities mean the bytes last read or written are still what the file holds, so an inotify event for
/// our own write, or a touch that changed nothing, costs one `stat` and no read.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int
    var changedSeconds: Int
    var changedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
        changedSeconds = Int(info.st_ctim.tv_sec)
        changedNanoseconds = Int(info.st_ctim.tv_nsec)
    }

    /// The identity of the file at `path` (following symlinks), or `nil` when there is none.
    static func of(path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    /// The identity of an open file.
    static func of(descriptor: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return FileIdentity(info)
    }
}
