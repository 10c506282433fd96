import Foundation

/// A 1-based line and column (in characters) of a byte offset in UTF-8 text, computed only when an
/// error is reported.
struct TextPosition: Equatable {
    var line: Int
    var column: Int

    init(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        let end = min(offset, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        let prefix = String(decoding: UnsafeBufferPointer(rebasing: bytes[lineStart..<end]), as: UTF8.self)
        self.line = line
        self.column = prefix.count + 1
    }
}
