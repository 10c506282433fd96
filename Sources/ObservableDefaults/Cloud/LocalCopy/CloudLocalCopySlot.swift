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
    static func bytes(sequence: UInt64, content: Data, paddingTo size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(size, headerPrefix.utf8.count + 100 + content.count))
        appendFrame(prefix: headerPrefix, sequence: sequence, content: content, to: &bytes)
        if bytes.count < size { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: size - bytes.count)) }
        return bytes
    }

    /// Appends a header line of the slots' form with its own `prefix` (`<prefix>N, length L, fnv1a64 H`),
    /// then `content`: the frame of a slot's save and of a journal record (``CloudLocalCopyJournal``).
    static func appendFrame(prefix: String, sequence: UInt64, content: Data, to bytes: inout [UInt8]) {
        // Appended byte by byte into one buffer: built from strings, the header was a tenth of a save's CPU.
        bytes.append(contentsOf: prefix.utf8)
        appendDigits(of: sequence, width: 20, radix: 10, to: &bytes)
        bytes.append(contentsOf: ", length ".utf8)
        appendDigits(of: UInt64(content.count), width: 10, radix: 10, to: &bytes)
        bytes.append(contentsOf: ", fnv1a64 ".utf8)
        appendDigits(of: checksum(content), width: 16, radix: 16, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: content)
    }

    /// The sequence number and content of a complete slot; `nil` for anything else (torn, damaged, empty,
    /// not a slot at all).
    static func read(_ data: Data) -> (sequence: UInt64, content: Data)? {
        readFrame(prefix: headerPrefix, in: data, at: data.startIndex).map { ($0.sequence, $0.content) }
    }

    /// The frame (see ``appendFrame(prefix:sequence:content:to:)``) that starts at `start` in `data`, with
    /// the index just past its content; `nil` unless it is complete and its checksum matches.
    static func readFrame(prefix: String, in data: Data, at start: Data.Index) -> (
        sequence: UInt64, content: Data, end: Data.Index
    )? {
        guard let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")),
            let header = header(prefix: prefix, data[start..<newline])
        else { return nil }
        let contentStart = data.index(after: newline)
        guard data.endIndex - contentStart >= header.length else { return nil }
        let content = data[contentStart..<contentStart + header.length]
        guard checksum(content) == header.checksum else { return nil }
        return (header.sequence, Data(content), contentStart + header.length)
    }

    /// The fields of a frame's header line (without its newline); `nil` unless it has `prefix` and all three.
    private static func header<Bytes: Collection<UInt8>>(prefix: String, _ line: Bytes) -> (
        sequence: UInt64, length: Int, checksum: UInt64
    )? {
        let header = String(decoding: line, as: UTF8.self)
        guard header.hasPrefix(prefix) else { return nil }
        let fields = header.dropFirst(prefix.count).split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard fields.count == 3, let sequence = UInt64(fields[0]),
            fields[1].hasPrefix("length "), let length = Int(fields[1].dropFirst("length ".count)), length >= 0,
            fields[2].hasPrefix("fnv1a64 "), let sum = UInt64(fields[2].dropFirst("fnv1a64 ".count), radix: 16)
        else { return nil }
        return (sequence, length, sum)
    }

    /// Whether `bytes` are a frame with `prefix` that was cut short — a save or append whose process was
    /// killed in the middle of it — rather than damage: nothing, the start of the header line, or a header
    /// that says more content than there is.
    static func isCutShortFrame<Bytes: Collection<UInt8>>(prefix: String, _ bytes: Bytes) -> Bool {
        let expected = Array(prefix.utf8)
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            return expected.starts(with: bytes) || bytes.starts(with: expected)
        }
        guard let header = header(prefix: prefix, bytes[bytes.startIndex..<newline]) else { return false }
        return bytes.distance(from: bytes.index(after: newline), to: bytes.endIndex) < header.length
    }

    /// The sequence number at the start of a slot's header (`bytes`: at least its first
    /// `headerPrefix` + 20 bytes), whether or not the save it starts is complete.
    /// Read in place: every save reads both slots' headers.
    static func sequence<Bytes: Collection<UInt8>>(inHeader bytes: Bytes) -> UInt64? {
        var position = bytes.startIndex
        for expected in headerPrefix.utf8 {
            guard position != bytes.endIndex, bytes[position] == expected else { return nil }
            bytes.formIndex(after: &position)
        }
        var value: UInt64 = 0
        for _ in 0..<20 {
            guard position != bytes.endIndex, case let digit = bytes[position] &- UInt8(ascii: "0"), digit < 10 else {
                return nil
            }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflowed, !carried else { return nil }
            value = sum
            bytes.formIndex(after: &position)
        }
        return value
    }

    /// The 20 digits of `sequence` as a header holds them, at ``sequenceOffset``: a save is written with
    /// sequence 0 first and gets its number only once its journal is emptied (see ``CloudLocalCopy``).
    static func sequenceDigits(_ sequence: UInt64) -> [UInt8] {
        var digits: [UInt8] = []
        appendDigits(of: sequence, width: 20, radix: 10, to: &digits)
        return digits
    }

    /// Where a slot's sequence digits start.
    static var sequenceOffset: Int64 { Int64(headerPrefix.utf8.count) }

    /// 64-bit FNV-1a: cheap, and enough to tell a torn or damaged save from a complete one.
    static func checksum(_ bytes: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBytes { buffer in
            for byte in buffer {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        return hash
    }

    /// `value`'s digits in `radix` (lowercase), zero-padded on the left to `width` (which they fit: the
    /// header's widths hold any `UInt64`).
    private static func appendDigits(of value: UInt64, width: Int, radix: UInt64, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value
        var position = start + width
        while rest > 0, position > start {
            position -= 1
            let digit = UInt8(rest % radix)
            bytes[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest /= radix
        }
    }
}
