/// The messages of the compiler's macro-plugin protocol (only the fields this plugin uses; unknown keys
/// are ignored). Read from and written to ``PluginJSON`` by hand (`PluginMessages+JSON.swift`), not with
/// `Codable`, so the plugin needs no Foundation.
public enum PluginMessages {
    /// Where a syntax node is in its file.
    public struct Location: Sendable {
        /// The file's path.
        public var fileName: String
        /// The UTF-8 offset in the file where the node's `source` begins (leading trivia included).
        public var offset: Int
    }

    /// A syntax node the compiler sends as source text.
    public struct Syntax: Sendable {
        /// The node's kind, when sent.
        public var kind: String?
        /// The node's source text, leading trivia included.
        public var source: String
        /// Where `source` begins in the file.
        public var location: Location

        /// Maps offsets in `source` to file offsets. Observed with Swift 6.3.1: `location.offset` is the file
        /// offset where `source` starts, leading trivia included.
        public var locator: SourceLocator {
            SourceLocator(nodeOffset: location.offset, triviaLength: 0)
        }
    }

    /// Names the macro being expanded, as in its `#externalMacro` declaration.
    public struct MacroReference: Sendable {
        /// The plugin module's name.
        public var moduleName: String
        /// The macro's implementation type name.
        public var typeName: String
        /// The macro's name as used in source, when sent.
        public var name: String?
    }

    /// A request to expand an attached macro in one role.
    public struct ExpandAttached: Sendable {
        /// The macro to expand.
        public var macro: MacroReference
        /// The role: `member`, `memberAttribute`, `accessor`, `peer`, `extension`, …
        public var macroRole: String
        /// The attribute that names the macro.
        public var attributeSyntax: Syntax
        /// The declaration the macro is attached to.
        public var declSyntax: Syntax
        /// The enclosing type (member-attribute role).
        public var parentDeclSyntax: Syntax?
        /// The type to extend (extension role).
        public var extendedTypeSyntax: Syntax?
        /// The conformances asked for (extension role).
        public var conformanceListSyntax: Syntax?
        /// The enclosing declarations, innermost first, with their bodies emptied (attributes kept).
        public var lexicalContext: [Syntax]?
    }

    /// A request to expand a freestanding macro (none of this plugin's macros is one).
    public struct ExpandFreestanding: Sendable {
        /// The macro to expand.
        public var macro: MacroReference
        /// The macro's use.
        public var syntax: Syntax
    }

    /// The compiler's protocol capability.
    public struct Capability: Sendable {
        /// The plugin protocol version the compiler speaks.
        public var protocolVersion: Int
    }

    /// The compiler's first message: it asks for the plugin's capability.
    public struct GetCapability: Sendable {
        /// The compiler's own capability, when sent.
        public var capability: Capability?
    }

    /// A message without fields.
    public struct Empty: Sendable {}

    /// A message from the compiler; exactly one field is set.
    public struct HostMessage: Sendable {
        /// Set when the compiler asks for the plugin's capability.
        public var getCapability: GetCapability?
        /// Set for an attached macro to expand.
        public var expandAttachedMacro: ExpandAttached?
        /// Set for a freestanding macro to expand.
        public var expandFreestandingMacro: ExpandFreestanding?
        /// Set when the compiler asks to load a plugin library (this executable plugin answers that it did not).
        public var loadPluginLibrary: Empty?
    }

    // MARK: - Responses

    struct Position {
        var fileName: String
        var offset: Int
    }

    struct Range {
        var fileName: String
        var startOffset: Int
        var endOffset: Int
    }

    struct Change {
        var range: Range
        var newText: String
    }

    struct FixIt {
        var message: String
        var changes: [Change]
    }

    struct Note {
        var position: Position
        var message: String
    }

    struct Diagnostic {
        var message: String
        var severity: String
        var position: Position
        var highlights: [Range]
        var notes: [Note]
        var fixIts: [FixIt]

        init(_ diagnostic: MacroDiagnostic, fileName: String) {
            message = diagnostic.message
            severity = diagnostic.severity.rawValue
            position = Position(fileName: fileName, offset: diagnostic.offset)
            highlights = diagnostic.highlights.map {
                Range(fileName: fileName, startOffset: $0.lowerBound, endOffset: $0.upperBound)
            }
            notes = []
            fixIts = diagnostic.fixIts.map { fixIt in
                FixIt(
                    message: fixIt.message,
                    changes: fixIt.changes.map {
                        Change(
                            range: Range(fileName: fileName, startOffset: $0.start, endOffset: $0.end),
                            newText: $0.newText)
                    })
            }
        }
    }

    struct ExpandResult {
        var expandedSource: String?
        var diagnostics: [Diagnostic]
    }

    struct CapabilityResult {
        var capability: Capability
    }

    struct LoadResult {
        var loaded: Bool
        var diagnostics: [Diagnostic]
    }

    enum Response {
        case getCapabilityResult(CapabilityResult)
        case expandMacroResult(ExpandResult)
        case loadPluginLibraryResult(LoadResult)
    }
}
