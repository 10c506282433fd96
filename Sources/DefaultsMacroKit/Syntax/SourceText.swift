/// The source a parser works on: the text and its UTF-8 bytes, for slicing by token offsets.
public struct SourceText: Sendable {
    /// The source text.
    public let text: String
    /// The text's UTF-8 bytes, indexed by token offsets.
    public let bytes: [UInt8]

    /// Wraps `text`.
    public init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    /// The text between two UTF-8 offsets.
    public func slice(_ start: Int, _ end: Int) -> String {
        let lower = max(0, min(start, bytes.count)), upper = max(lower, min(end, bytes.count))
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }
}
