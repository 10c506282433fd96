import Foundation

/// A 1-based line and column (in characters) of a byte offset in UTF-8 text, computed only when an
/// error is reported. A line ends at LF, CRLF or a lone CR (as XML and editors count them).
struct TextPosition: Equatable {
    var line: Int
    var column: Int

    init(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        let end = min(offset, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end {
            // A CR followed by an LF ends its line at the LF.
            let isLineEnd =
                bytes[i] == UInt8(ascii: "\n")
                || (bytes[i] == UInt8(ascii: "\r") && (i + 1 == bytes.count || bytes[i + 1] != UInt8(ascii: "\n")))
            if isLineEnd {
                line += 1
                lineStart = i + 1
            }
        }
        let prefix = String(decoding: UnsafeBufferPointer(rebasing: bytes[lineStart..<end]), as: UTF8.self)
        self.line = line
        self.column = prefix.count + 1
    }
}
