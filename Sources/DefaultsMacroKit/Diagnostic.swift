/// A diagnostic the plugin reports to the compiler, positioned by UTF-8 offsets in the file.
public struct MacroDiagnostic: Equatable, Sendable {
    public enum Severity: String, Sendable {
        case error, warning, note, remark
    }

    /// One text replacement of a fix-it.
    public struct Change: Equatable, Sendable {
        public var start: Int
        public var end: Int
        public var newText: String
        public init(start: Int, end: Int, newText: String) {
            self.start = start
            self.end = end
            self.newText = newText
        }
    }

    public struct FixIt: Equatable, Sendable {
        public var message: String
        public var changes: [Change]
        public init(message: String, changes: [Change]) {
            self.message = message
            self.changes = changes
        }
    }

    public var message: String
    public var severity: Severity
    /// The file offset the diagnostic points at.
    public var offset: Int
    /// Highlighted file ranges.
    public var highlights: [Range<Int>]
    public var fixIts: [FixIt]

    public init(_ severity: Severity, _ message: String, at offset: Int, highlights: [Range<Int>] = [], fixIts: [FixIt] = []) {
        self.severity = severity
        self.message = message
        self.offset = offset
        self.highlights = highlights
        self.fixIts = fixIts
    }
}

/// Converts offsets in a node's `source` text (which starts with leading trivia) to offsets in the file.
public struct SourceLocator: Sendable, Equatable {
    /// The file offset of the node's first token.
    public var nodeOffset: Int
    /// The length of the node's leading trivia in `source`.
    public var triviaLength: Int

    public init(nodeOffset: Int, triviaLength: Int) {
        self.nodeOffset = nodeOffset
        self.triviaLength = triviaLength
    }

    /// The file offset of `offset` in the node's source.
    public func file(_ offset: Int) -> Int { nodeOffset + offset - triviaLength }
}

/// The result of one expansion: text (or `nil` when it failed) and diagnostics.
public struct ExpansionResult: Equatable, Sendable {
    public var source: String?
    public var diagnostics: [MacroDiagnostic]

    public init(source: String?, diagnostics: [MacroDiagnostic] = []) {
        self.source = source
        self.diagnostics = diagnostics
    }

    public static let empty = ExpansionResult(source: "")

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}
