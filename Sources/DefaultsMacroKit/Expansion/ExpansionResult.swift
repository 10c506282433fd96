/// The result of one expansion: text (or `nil` when it failed) and diagnostics.
public struct ExpansionResult: Equatable, Sendable {
    /// The generated source, or `nil` when the expansion failed.
    public var source: String?
    /// Diagnostics to report, in file offsets.
    public var diagnostics: [MacroDiagnostic]

    /// Creates a result.
    public init(source: String?, diagnostics: [MacroDiagnostic] = []) {
        self.source = source
        self.diagnostics = diagnostics
    }

    /// An expansion that adds nothing and reports nothing.
    public static let empty = ExpansionResult(source: "")

    /// Whether any diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}
