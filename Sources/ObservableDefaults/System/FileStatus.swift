#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What `stat` says about a file: which file it is, its kind, permission bits, owner, size and times.
struct FileStatus: Sendable {
    /// The kinds of file the library tells apart.
    enum Kind: Sendable, Equatable {
        case regular, directory, symlink, other
    }

    /// Which file this is on the machine: device and inode.
    struct Node: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// A point in time with nanoseconds, as `stat` gives it.
    struct Time: Equatable, Sendable {
        var seconds: Int
        var nanoseconds: Int
    }

    var node: Node
    var kind: Kind
    /// The permission bits, set-id bits and sticky bit (`st_mode & 07777`).
    var permissions: UInt32
    var owner: UInt32
    var group: UInt32
    var size: Int64
    /// How many names the file has (0: removed, while still open).
    var linkCount: UInt64
    var modified: Time
    var changed: Time

    init(_ info: stat) {
        node = Node(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        permissions = UInt32(info.st_mode & 0o7777)
        owner = UInt32(info.st_uid)
        group = UInt32(info.st_gid)
        size = Int64(info.st_size)
        linkCount = UInt64(info.st_nlink)
        modified = Time(seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
        changed = Time(seconds: Int(info.st_ctim.tv_sec), nanoseconds: Int(info.st_ctim.tv_nsec))
    }

    /// `stat` of `path`, following symlinks.
    init(path: String) throws(SystemCallError) {
        var info = stat()
        try checked("stat", path: path) { stat(path, &info) }
        self.init(info)
    }

    /// `lstat` of `path`: a symlink itself, not what it points to.
    init(linkAt path: String) throws(SystemCallError) {
        var info = stat()
        try checked("lstat", path: path) { lstat(path, &info) }
        self.init(info)
    }

    /// `fstat` of an open file; `path` names it in an error.
    init(descriptor: borrowing FileDescriptor, path: String) throws(SystemCallError) {
        var info = stat()
        let raw = descriptor.rawValue
        try checked("fstat", path: path) { fstat(raw, &info) }
        self.init(info)
    }

    /// The status of `path` (following symlinks), or `nil` when it cannot be taken (absent, or a
    /// directory on the way cannot be searched).
    static func ifPresent(at path: String) -> FileStatus? {
        try? FileStatus(path: path)
    }

    /// Whether others (not the owner or group) may write: `S_IWOTH`.
    var isWritableByOthers: Bool { permissions & UInt32(S_IWOTH) != 0 }
    /// The sticky bit (`S_ISVTX`): in a directory, only a file's owner may remove or rename it.
    var isSticky: Bool { permissions & UInt32(S_ISVTX) != 0 }
    /// Whether any write bit is set (root's writes ignore the bits, so they are checked explicitly).
    var hasWriteBit: Bool { permissions & 0o222 != 0 }
}
