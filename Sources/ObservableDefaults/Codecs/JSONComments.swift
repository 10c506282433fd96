/// The comments a JSON suite file may hold, as VS Code's `settings.json` does: `//` to the end of the
/// line, and `/* … */` (not nested). The reader, the member scanner and the editor skip them alike.
enum JSONComments {
    /// Moves `index`, at a `/`, past the comment starting there. Returns `true` when it skipped one,
    /// `false` (not moved) when the `/` starts no comment, and `nil` (not moved) for a `/*` without `*/`.
    /// A `//` comment ends before its line break (or at the end of the bytes).
    static func skip(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool? {
        guard index + 1 < bytes.count else { return false }
        switch bytes[index + 1] {
        case UInt8(ascii: "/"):
            var end = index + 2
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n"), bytes[end] != UInt8(ascii: "\r") { end += 1 }
            index = end
            return true
        case UInt8(ascii: "*"):
            var end = index + 2
            while end + 1 < bytes.count {
                if bytes[end] == UInt8(ascii: "*"), bytes[end + 1] == UInt8(ascii: "/") {
                    index = end + 2
                    return true
                }
                end += 1
            }
            return nil
        default:
            return false
        }
    }

    /// Moves past whitespace and comments; `false` (at the comment) for an unterminated `/*` comment.
    static func skipTrivia(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "/"):
                switch skip(bytes, &index) {
                case .some(true): continue
                case .some(false): return true
                case nil: return false
                }
            default: return true
            }
        }
        return true
    }
}
