/// Converts offsets in a node's `source` text (which starts with leading trivia) to offsets in the file.
public struct SourceLocator: Sendable, Equatable {
    /// The file offset of the node's first token.
    public var nodeOffset: Int
    /// The length of the node's leading trivia in `source`.
    public var triviaLength: Int

    /// Creates a locator for a node whose first token is at file offset `nodeOffset`, after `triviaLength` bytes of trivia.
    public init(nodeOffset: Int, triviaLength: Int) {
        self.nodeOffset = nodeOffset
        self.triviaLength = triviaLength
    }

    /// The file offset of `offset` in the node's source.
    public func file(_ offset: Int) -> Int { nodeOffset + offset - triviaLength }
}
