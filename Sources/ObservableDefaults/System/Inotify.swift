#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One inotify instance (non-blocking): adding and removing watches and reading decoded events.
final class Inotify: Sendable {
    /// What happened, as the bits of `inotify_event.mask`.
    struct Mask: OptionSet, Sendable {
        var rawValue: UInt32

        static let modified = Mask(rawValue: UInt32(IN_MODIFY))
        static let attributesChanged = Mask(rawValue: UInt32(IN_ATTRIB))
        static let closedAfterWriting = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
        static let movedFrom = Mask(rawValue: UInt32(IN_MOVED_FROM))
        static let movedTo = Mask(rawValue: UInt32(IN_MOVED_TO))
        static let created = Mask(rawValue: UInt32(IN_CREATE))
        static let deleted = Mask(rawValue: UInt32(IN_DELETE))
        static let deletedSelf = Mask(rawValue: UInt32(IN_DELETE_SELF))
        static let movedSelf = Mask(rawValue: UInt32(IN_MOVE_SELF))
        /// Only for watches: fail unless the path is a directory.
        static let onlyDirectory = Mask(rawValue: UInt32(IN_ONLYDIR))
        /// The event queue overflowed: events were lost.
        static let queueOverflowed = Mask(rawValue: UInt32(IN_Q_OVERFLOW))
        /// The watch ended (its directory was deleted, or the watch removed).
        static let watchEnded = Mask(rawValue: UInt32(IN_IGNORED))
        /// The event's name is a directory.
        static let isDirectory = Mask(rawValue: UInt32(IN_ISDIR))
    }

    /// One decoded `inotify_event`.
    struct Event {
        var watch: Int32
        var mask: Mask
        /// The name in the watched directory; empty for events about the directory itself.
        var name: String
    }

    private let descriptor: FileDescriptor

    /// `inotify_init1(IN_CLOEXEC | IN_NONBLOCK)`.
    init() throws(SystemCallError) {
        let raw = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if raw < 0 { throw SystemCallError("inotify_init1", path: "") }
        descriptor = FileDescriptor(owning: raw, path: "")
    }

    /// The descriptor to poll for readability.
    var pollable: Int32 { descriptor.rawValue }

    /// `inotify_add_watch(2)`; returns the watch descriptor.
    func addWatch(_ path: String, mask: Mask) throws(SystemCallError) -> Int32 {
        let watch = inotify_add_watch(descriptor.rawValue, path, mask.rawValue)
        if watch < 0 { throw SystemCallError("inotify_add_watch", path: path) }
        return watch
    }

    /// `inotify_rm_watch(2)`. A watch the kernel already ended (`EINVAL`) is fine: it is gone either way.
    func removeWatch(_ watch: Int32) {
        _ = inotify_rm_watch(descriptor.rawValue, watch)
    }

    /// Reads every queued event (until the queue is empty) through `buffer` and hands each to `body`.
    /// Returns how many `read`s that took.
    ///
    /// The kernel's `read` hands out queued events until the queue is empty or the next one does not fit.
    /// A read that left room for the largest event therefore emptied the queue, and no second `read` (which
    /// would only fail with `EAGAIN`) is made: that saves the watcher one system call per wake-up, i.e. per
    /// save of a watched suite. An event queued afterwards makes the descriptor readable again.
    @discardableResult
    func drainEvents(
        into buffer: UnsafeMutableRawBufferPointer, _ body: (Event) -> Void
    ) throws(SystemCallError) -> Int {
        var reads = 0
        while true {
            reads += 1
            guard let count = try descriptor.readSome(into: buffer), count > 0 else { return reads }
            Self.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count]), body)
            if buffer.count - count >= Self.largestEventSize { return reads }
        }
    }

    /// The size of the largest event: the fixed part and a name of `NAME_MAX` bytes with its NUL.
    static let largestEventSize = headerSize + Int(NAME_MAX) + 1

    private static let watchOffset = MemoryLayout<inotify_event>.offset(of: \inotify_event.wd)!
    private static let maskOffset = MemoryLayout<inotify_event>.offset(of: \inotify_event.mask)!
    private static let lengthOffset = MemoryLayout<inotify_event>.offset(of: \inotify_event.len)!
    /// The fixed part; the name (`len` bytes, NUL-padded) follows it.
    private static let headerSize = MemoryLayout<inotify_event>.size

    /// Decodes the events in `bytes`, as `read` returned them (whole events only).
    static func decode(_ bytes: UnsafeRawBufferPointer, _ body: (Event) -> Void) {
        var offset = 0
        while offset + headerSize <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset + watchOffset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + maskOffset, as: UInt32.self)
            let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + lengthOffset, as: UInt32.self))
            let nameStart = offset + headerSize
            guard nameStart + nameLength <= bytes.count else { return }
            // The name is NUL-terminated inside its `len` bytes (padding follows).
            let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameStart + nameLength])
            let end = nameBytes.firstIndex(of: 0) ?? nameBytes.count
            let name = String(decoding: nameBytes[..<end], as: UTF8.self)
            offset = nameStart + nameLength
            body(Event(watch: watch, mask: Mask(rawValue: mask), name: name))
        }
    }
}
