/// A diagnostic the plugin reports to the compiler, positioned by UTF-8 offsets in the file.
public struct MacroDiagnostic: Equatable, Sendable {
    /// How serious a diagnostic is (the compiler's names).
    public enum Severity: String, Sendable {
        /// An error, a warning, a note or a remark.
        case error, warning, note, remark
    }

    /// One text replacement of a fix-it.
    public struct Change: Equatable, Sendable {
        /// The file offset where the replaced text starts.
        public var start: Int
        /// The file offset just past the replaced text.
        public var end: Int
        /// The text that replaces the range (empty to delete it).
        public var newText: String
        /// Creates a replacement of the file range `start..<end` with `newText`.
        public init(start: Int, end: Int, newText: String) {
            self.start = start
            self.end = end
            self.newText = newText
        }
    }

    /// A suggested fix: a message and the replacements that make it.
    public struct FixIt: Equatable, Sendable {
        /// What the fix does, as the compiler shows it.
        public var message: String
        /// The replacements, in file offsets.
        public var changes: [Change]
        /// Creates a fix-it.
        public init(message: String, changes: [Change]) {
            self.message = message
            self.changes = changes
        }
    }

    /// The text the compiler shows.
    public var message: String
    /// Error, warning, note or remark.
    public var severity: Severity
    /// The file offset the diagnostic points at.
    public var offset: Int
    /// Highlighted file ranges.
    public var highlights: [Range<Int>]
    /// Suggested fixes.
    public var fixIts: [FixIt]

    /// Creates a diagnostic.
    /// - Parameters:
    ///   - severity: How serious it is.
    ///   - message: The text the compiler shows.
    ///   - offset: The file offset it points at.
    ///   - highlights: File ranges to highlight.
    ///   - fixIts: Suggested fixes.
    public init(
        _ severity: Severity, _ message: String, at offset: Int, highlights: [Range<Int>] = [], fixIts: [FixIt] = []
    ) {
        self.severity = severity
        self.message = message
        self.offset = offset
        self.highlights = highlights
        self.fixIts = fixIts
    }
}
