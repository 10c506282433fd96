/// One lexical token of Swift source, with its UTF-8 byte range in the text it came from.
public struct Token: Equatable, Sendable {
    /// What kind of token this is.
    public enum Kind: Equatable, Sendable {
        /// An identifier or keyword (`var`, `host`); backticked names keep their backticks in `text`.
        case identifier
        /// A number literal.
        case number
        /// A complete string literal (any form: plain, multi-line, raw, with interpolation).
        case string
        /// `@name` (the `@` and the name).
        case attribute
        /// `#name` (`#if`, `#else`, `#endif`, `#selector`, …).
        case pound
        /// An operator (`=`, `+`, `->`, `?`, `!`, `.`, …).
        case `operator`
        /// One of `( ) [ ] { } , : ;`.
        case punctuation
    }

    /// The token's kind.
    public var kind: Kind
    /// The token's text (exactly as in the source).
    public var text: String
    /// The UTF-8 offset of the first byte.
    public var start: Int
    /// The UTF-8 offset just past the last byte.
    public var end: Int
    /// Whether a line break precedes this token (in the trivia before it).
    public var atLineStart: Bool

    /// Creates a token.
    public init(kind: Kind, text: String, start: Int, end: Int, atLineStart: Bool) {
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end
        self.atLineStart = atLineStart
    }

    /// `text` without surrounding backticks (the name an identifier declares).
    public var identifierName: String {
        if text.hasPrefix("`") && text.hasSuffix("`") && text.count >= 2 {
            return String(text.dropFirst().dropLast())
        }
        return text
    }

    func isPunctuation(_ p: String) -> Bool { kind == .punctuation && text == p }
    func isIdentifier(_ name: String) -> Bool { kind == .identifier && text == name }
    func isOperator(_ op: String) -> Bool { kind == .operator && text == op }
}
