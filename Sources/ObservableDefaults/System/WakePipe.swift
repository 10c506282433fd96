#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A non-blocking pipe one thread polls so others can wake it: ``wake()`` writes a byte, ``drain()``
/// empties it.
final class WakePipe: Sendable {
    private let reader: FileDescriptor
    private let writer: FileDescriptor

    /// `pipe(2)`, both ends close-on-exec and non-blocking.
    init() throws(SystemCallError) {
        var ends: [Int32] = [-1, -1]
        try checked("pipe", path: "") { pipe(&ends) }
        reader = FileDescriptor(owning: ends[0], path: "")
        writer = FileDescriptor(owning: ends[1], path: "")
        for end in ends {
            try checked("fcntl", path: "") { fcntl(end, F_SETFD, FD_CLOEXEC) }
            try checked("fcntl", path: "") { fcntl(end, F_SETFL, O_NONBLOCK) }
        }
    }

    /// The descriptor to poll for readability.
    var pollable: Int32 { reader.rawValue }

    /// Wakes the polling thread. A full pipe wakes it already, so `false` from the write is fine.
    func wake() throws(SystemCallError) {
        try writer.writeByte(1)
    }

    /// Empties the pipe.
    func drain() throws(SystemCallError) {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &bytes) { buffer throws(SystemCallError) in
            while let count = try reader.readSome(into: buffer), count > 0 {}
        }
    }
}

/// `poll(2)` over a few descriptors for readability.
enum Poll {
    /// Waits until one of `descriptors` is readable or `timeout` milliseconds pass (`-1`: no limit);
    /// returns, per descriptor, whether it is ready. An interrupted wait returns with none ready.
    static func readable(_ descriptors: [Int32], timeout: Int32) throws(SystemCallError) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&entries, nfds_t(entries.count), timeout)
        if ready < 0 {
            if Errno.current == .interrupted { return descriptors.map { _ in false } }
            throw SystemCallError("poll", path: "")
        }
        return entries.map { $0.revents != 0 }
    }
}
