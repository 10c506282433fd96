/// What identifies one version of a file on disk: device, inode, size and change times.
///
/// A replaced file (rename-over) has a new inode; an edited one a new size or modification time. Equal
/// identities mean the bytes last read or written are still what the file holds, so an inotify event for
/// our own write, or a touch that changed nothing, costs one `stat` and no read.
struct FileIdentity: Equatable, Sendable {
    var node: FileStatus.Node
    var size: Int64
    var modified: FileStatus.Time
    var changed: FileStatus.Time

    init(_ status: FileStatus) {
        node = status.node
        size = status.size
        modified = status.modified
        changed = status.changed
    }

    /// The same inode, size and modification time: the same version unless only its change time differs
    /// (a rename, `chmod` or `chown` changes that alone; a write changes the modification time too).
    func isSameVersion(ignoringChangeTime other: FileIdentity) -> Bool {
        node == other.node && size == other.size && modified == other.modified
    }

    /// The identity of the file at `path` (following symlinks), or `nil` when there is none.
    static func of(path: String) -> FileIdentity? {
        FileStatus.ifPresent(at: path).map(FileIdentity.init)
    }
}
