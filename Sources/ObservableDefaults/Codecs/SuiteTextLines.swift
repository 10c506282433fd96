import Foundation

/// The line logic both suite editors (``JSONSuiteEditor``, ``PropertyListXMLSuiteEditor``) share: where a
/// member's line starts and ends (so a removed member goes with its line, a new one gets a line of its
/// own), the comment lines that describe a member (a new member goes above them), the file's line break
/// and indentation, and the byte order of keys that decides whether a file's keys are sorted.
///
/// A comment is whatever the format's `skipComment` moves past: it returns `true` after a comment at the
/// index, `false` when none stands there, `nil` when one is unterminated.
enum SuiteTextLines {
    typealias SkipComment = (UnsafeBufferPointer<UInt8>, inout Int) -> Bool?

    /// Where the line holding `position` starts, when only spaces and tabs stand before it on the line.
    static func lineStart(_ bytes: [UInt8], before position: Int) -> Int? {
        var index = position
        while index > 0, bytes[index - 1] == UInt8(ascii: " ") || bytes[index - 1] == UInt8(ascii: "\t") {
            index -= 1
        }
        return index > 0 && bytes[index - 1] == UInt8(ascii: "\n") ? index : nil
    }

    /// The spaces and tabs that start the line holding `position` (whatever follows them).
    static func indentation(_ bytes: [UInt8], ofLineHolding position: Int) -> [UInt8] {
        var start = position
        while start > 0, bytes[start - 1] != UInt8(ascii: "\n") { start -= 1 }
        var end = start
        while end < position, bytes[end] == UInt8(ascii: " ") || bytes[end] == UInt8(ascii: "\t") { end += 1 }
        return Array(bytes[start..<end])
    }

    /// When only spaces, tabs and comments that end on the line stand between `position` and the end of
    /// its line: where the line break starts, and the position after it.
    static func lineEnd(_ bytes: [UInt8], from position: Int, skipComment: SkipComment) -> (
        breakStart: Int, after: Int
    )? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = position
            while index < buffer.count {
                switch buffer[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"): index += 1
                case UInt8(ascii: "\r"):
                    guard index + 1 < buffer.count, buffer[index + 1] == UInt8(ascii: "\n") else { return nil }
                    return (index, index + 2)
                case UInt8(ascii: "\n"): return (index, index + 1)
                default:
                    let start = index
                    guard skipComment(buffer, &index) == true, !buffer[start..<index].contains(UInt8(ascii: "\n"))
                    else { return nil }
                }
            }
            return nil
        }
    }

    /// Where the comment lines right above the line starting at `lineStart` begin: a new member goes above
    /// the comments that describe the next one. Only whole lines holding one comment each, with no blank
    /// line between them and the member, and below the line holding `boundary` (the end of the member or
    /// the tag before); otherwise `lineStart`.
    static func commentLinesStart(
        _ bytes: [UInt8], above lineStart: Int, below boundary: Int, skipComment: SkipComment
    ) -> Int {
        guard let first = lineEnd(bytes, from: boundary, skipComment: skipComment)?.after, first < lineStart else {
            return lineStart
        }
        var start: Int?
        var index = first
        while index < lineStart {
            let lineBegin = index
            while bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
            let commentStart = index
            let isComment = bytes.withUnsafeBufferPointer { buffer in
                skipComment(buffer, &index) == true && !buffer[commentStart..<index].contains(UInt8(ascii: "\n"))
            }
            guard isComment, let end = lineEnd(bytes, from: index, skipComment: skipComment) else {
                // A blank line or anything else: the comments below it (if any) belong to the member.
                start = nil
                guard let end = lineEnd(bytes, from: lineBegin, skipComment: skipComment) else { return lineStart }
                index = end.after
                continue
            }
            if start == nil { start = lineBegin }
            index = end.after
        }
        return index == lineStart ? (start ?? lineStart) : lineStart
    }

    /// `\r\n` when the file's first line break is one, else `\n`.
    static func newline(of bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(of: UInt8(ascii: "\n")), first > 0, bytes[first - 1] == UInt8(ascii: "\r")
        else { return [UInt8(ascii: "\n")] }
        return [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
    }

    /// The indentation of the first of `starts` (where members begin) on a line of its own, `nil` when
    /// none is indented.
    static func indentationUnit(_ bytes: [UInt8], starts: some Sequence<Int>) -> [UInt8]? {
        for start in starts {
            if let lineStart = lineStart(bytes, before: start), lineStart < start {
                return Array(bytes[lineStart..<start])
            }
        }
        return nil
    }

    /// Byte order of two keys (see ``ExactKey``): negative, zero or positive.
    static func compare(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                if order != 0 { return order < 0 ? -1 : 1 }
                return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
            }
        }
    }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
