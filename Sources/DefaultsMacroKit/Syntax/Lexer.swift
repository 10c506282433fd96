/// A Swift lexer sufficient for declarations: it knows every form of string literal (plain, multi-line,
/// raw `#"…"#`, interpolation with nested parentheses and strings), nested `/* */` comments, attributes and
/// `#` directives. Trivia (whitespace and comments) is skipped; offsets are UTF-8 byte offsets.
public struct Lexer {
    private let bytes: [UInt8]
    private var position = 0
    private var sawNewline = true

    /// The tokens of `source`. Unterminated constructs end at the end of the text (never a crash).
    public static func tokenize(_ source: String) -> [Token] {
        var lexer = Lexer(bytes: Array(source.utf8))
        var tokens: [Token] = []
        while let token = lexer.next() { tokens.append(token) }
        return tokens
    }

    /// The tokens of `source` up to and including the first `{` outside parentheses and brackets: the
    /// header of a type declaration and the brace that opens its body. A member-attribute request carries
    /// the whole class for every member, so reading only the header keeps a class linear in its size.
    public static func tokenizeHeader(_ source: String) -> [Token] {
        var lexer = Lexer(bytes: Array(source.utf8))
        var tokens: [Token] = []
        var depth = 0
        while let token = lexer.next() {
            tokens.append(token)
            guard token.kind == .punctuation else { continue }
            switch token.text {
            case "(", "[": depth += 1
            case ")", "]": depth -= 1
            case "{" where depth <= 0: return tokens
            default: break
            }
        }
        return tokens
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        let index = position + ahead
        return index < bytes.count ? bytes[index] : nil
    }

    private mutating func next() -> Token? {
        skipTrivia()
        guard let byte = peek() else { return nil }
        let start = position
        let lineStart = sawNewline
        sawNewline = false
        let kind: Token.Kind
        switch byte {
        case UInt8(ascii: "\""):
            scanString(hashes: 0)
            kind = .string
        case UInt8(ascii: "#"):
            if scanRawString() {
                kind = .string
            } else {
                position += 1
                scanIdentifierBody()
                kind = .pound
            }
        case UInt8(ascii: "@"):
            position += 1
            if peek() == UInt8(ascii: "`") { scanBacktick() } else { scanIdentifierBody() }
            kind = .attribute
        case UInt8(ascii: "`"):
            scanBacktick()
            kind = .identifier
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            scanNumber()
            kind = .number
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: ";"):
            position += 1
            kind = .punctuation
        default:
            if Lexer.isIdentifierStart(byte) {
                scanIdentifierBody()
                kind = .identifier
            } else if Lexer.isOperatorByte(byte) {
                scanOperator()
                kind = .operator
            } else {
                position += 1
                kind = .operator
            }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        return Token(kind: kind, text: text, start: start, end: position, atLineStart: lineStart)
    }

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    static func isOperatorByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "!"),
            UInt8(ascii: "*"), UInt8(ascii: "%"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"),
            UInt8(ascii: "|"), UInt8(ascii: "^"), UInt8(ascii: "~"), UInt8(ascii: "?"), UInt8(ascii: "."),
            UInt8(ascii: "\\"):
            return true
        default:
            return false
        }
    }

    private mutating func scanIdentifierBody() {
        while let byte = peek(), Lexer.isIdentifierByte(byte) { position += 1 }
    }

    private mutating func scanBacktick() {
        position += 1
        while let byte = peek(), byte != UInt8(ascii: "`"), byte != UInt8(ascii: "\n") { position += 1 }
        if peek() == UInt8(ascii: "`") { position += 1 }
    }

    private mutating func scanNumber() {
        while let byte = peek() {
            if Lexer.isIdentifierByte(byte) {
                position += 1
            } else if byte == UInt8(ascii: "."), let after = peek(1), after >= UInt8(ascii: "0"),
                after <= UInt8(ascii: "9")
            {
                position += 1
            } else if (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")),
                let before = position > 0 ? bytes[position - 1] : nil,
                before == UInt8(ascii: "e") || before == UInt8(ascii: "E") || before == UInt8(ascii: "p")
                    || before == UInt8(ascii: "P")
            {
                position += 1
            } else {
                break
            }
        }
    }

    private mutating func scanOperator() {
        // `\` (key paths) stands alone; a `.` only joins dot-operators (`..<`), `.member` is a `.` token.
        if peek() == UInt8(ascii: "\\") || (peek() == UInt8(ascii: ".") && peek(1) != UInt8(ascii: ".")) {
            position += 1
            return
        }
        while let byte = peek(), Lexer.isOperatorByte(byte), byte != UInt8(ascii: "\\") {
            if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "/") || peek(1) == UInt8(ascii: "*") { break }
            position += 1
        }
    }

    private mutating func skipTrivia() {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), 0x0B, 0x0C:
                position += 1
            case UInt8(ascii: "\n"):
                sawNewline = true
                position += 1
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "/"):
                while let b = peek(), b != UInt8(ascii: "\n") { position += 1 }
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"):
                skipBlockComment()
            default:
                return
            }
        }
    }

    private mutating func skipBlockComment() {
        var depth = 0
        while position < bytes.count {
            if peek() == UInt8(ascii: "/") && peek(1) == UInt8(ascii: "*") {
                depth += 1
                position += 2
            } else if peek() == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/") {
                depth -= 1
                position += 2
                if depth == 0 { return }
            } else {
                if peek() == UInt8(ascii: "\n") { sawNewline = true }
                position += 1
            }
        }
    }

    /// Scans a string literal starting at its opening quote; `hashes` `#` were already consumed.
    private mutating func scanString(hashes: Int) {
        let multiLine = peek() == UInt8(ascii: "\"") && peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"")
        position += multiLine ? 3 : 1
        while let byte = peek() {
            if byte == UInt8(ascii: "\\") && hashesFollow(from: position + 1, count: hashes) {
                position += 1 + hashes
                if peek() == UInt8(ascii: "(") {
                    position += 1
                    scanInterpolation()
                } else if peek() != nil {
                    position += 1
                }
                continue
            }
            if byte == UInt8(ascii: "\"") {
                if multiLine {
                    if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\""),
                        hashesFollow(from: position + 3, count: hashes)
                    {
                        position += 3 + hashes
                        return
                    }
                } else if hashesFollow(from: position + 1, count: hashes) {
                    position += 1 + hashes
                    return
                }
            }
            if byte == UInt8(ascii: "\n") && !multiLine { return }
            position += 1
        }
    }

    /// Scans a raw string (`#"…"#`, `##"…"##`, …) when the `#`s at the current position open one.
    /// - Returns: `true` after scanning it; `false`, with the position unchanged, when no `"` follows the `#`s.
    private mutating func scanRawString() -> Bool {
        var hashes = 0
        while peek(hashes) == UInt8(ascii: "#") { hashes += 1 }
        guard peek(hashes) == UInt8(ascii: "\"") else { return false }
        position += hashes
        scanString(hashes: hashes)
        return true
    }

    private func hashesFollow(from index: Int, count: Int) -> Bool {
        guard count > 0 else { return true }
        guard index + count <= bytes.count else { return false }
        return bytes[index..<(index + count)].allSatisfy { $0 == UInt8(ascii: "#") }
    }

    /// Scans the inside of `\( … )` up to and including its closing parenthesis.
    private mutating func scanInterpolation() {
        var depth = 1
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "("):
                depth += 1
                position += 1
            case UInt8(ascii: ")"):
                depth -= 1
                position += 1
                if depth == 0 { return }
            case UInt8(ascii: "\""):
                scanString(hashes: 0)
            case UInt8(ascii: "#"):
                if !scanRawString() { position += 1 }  // a `#` that opens no raw string
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"):
                skipBlockComment()
            default:
                position += 1
            }
        }
    }
}
