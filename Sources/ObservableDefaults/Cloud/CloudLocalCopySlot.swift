import Foundation

/// One of the two slot files a ``CloudLocalCopy`` alternates between: a header line, then the copy's JSON.
///
/// ```
/// observable-defaults cloud local copy, sequence 00000000000000000042, length 0000000306, fnv1a64 0123456789abcdef
/// {"account": …, "values": …}
/// ```
///
/// A save overwrites the older slot in place (no new inode, no rename: on ext4 a rename over a file evicts
/// the replaced inode and flushes the new file's data at once, I/O that queues with etcd's own `fsync`). The
/// header's sequence number says which slot is newer; its length and checksum of the JSON that follows
/// tell a complete save from a torn one (a process killed in the middle of it), whose slot is then passed
/// over for the other. Whatever follows the length (spaces left over from a longer earlier save) is ignored.
enum CloudLocalCopySlot {
    static let headerPrefix = "observable-defaults cloud local copy, sequence "

    /// A slot's header and content, with spaces after it up to `paddingTo` bytes (so the file need not
    /// shrink: the rest of a longer earlier save is overwritten with spaces, not truncated).
    static func bytes(sequence: UInt64, content: Data, paddingTo size: Int) -> Data {
        var header = headerPrefix + zeroPadded(String(sequence), 20) + ", length " + zeroPadded(String(content.count), 10)
        header += ", fnv1a64 " + zeroPadded(String(checksum(content), radix: 16), 16) + "\n"
        var data = Data(header.utf8)
        data.append(content)
        if data.count < size { data.append(Data(repeating: UInt8(ascii: " "), count: size - data.count)) }
        return data
    }

    /// The sequence number and content of a complete slot; `nil` for anything else (torn, damaged, empty,
    /// not a slot at all).
    static func read(_ data: Data) -> (sequence: UInt64, content: Data)? {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let header = String(decoding: data[data.startIndex..<newline], as: UTF8.self)
        guard header.hasPrefix(headerPrefix) else { return nil }
        let fields = header.dropFirst(headerPrefix.count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard fields.count == 3, let sequence = UInt64(fields[0]),
            fields[1].hasPrefix("length "), let length = Int(fields[1].dropFirst("length ".count)),
            fields[2].hasPrefix("fnv1a64 "), let sum = UInt64(fields[2].dropFirst("fnv1a64 ".count), radix: 16)
        else { return nil }
        let start = data.index(after: newline)
        guard length >= 0, data.endIndex - start >= length else { return nil }
        let content = data[start..<start + length]
        guard checksum(content) == sum else { return nil }
        return (sequence, Data(content))
    }

    /// The sequence number at the start of a slot's header (`bytes`: at least its first
    /// `headerPrefix` + 20 bytes), whether or not the save it starts is complete.
    static func sequence<Bytes: Collection<UInt8>>(inHeader bytes: Bytes) -> UInt64? {
        let prefix = Array(headerPrefix.utf8)
        let bytes = Array(bytes)
        guard bytes.count >= prefix.count + 20, Array(bytes[0..<prefix.count]) == prefix else { return nil }
        return UInt64(String(decoding: bytes[prefix.count..<prefix.count + 20], as: UTF8.self))
    }

    /// 64-bit FNV-1a: cheap, and enough to tell a torn or damaged save from a complete one.
    static func checksum(_ bytes: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func zeroPadded(_ text: String, _ width: Int) -> String {
        String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
