import Foundation

/// The messages of the compiler's macro-plugin protocol (only the fields this plugin uses; unknown keys
/// are ignored).
public enum PluginMessages {
    public struct Location: Codable, Sendable {
        public var fileName: String
        public var offset: Int
    }

    public struct Syntax: Codable, Sendable {
        public var kind: String?
        public var source: String
        public var location: Location

        /// Maps offsets in `source` to file offsets. Observed with Swift 6.3.1: `location.offset` is the file
        /// offset where `source` starts, leading trivia included.
        public var locator: SourceLocator {
            SourceLocator(nodeOffset: location.offset, triviaLength: 0)
        }
    }

    public struct MacroReference: Codable, Sendable {
        public var moduleName: String
        public var typeName: String
        public var name: String?
    }

    public struct ExpandAttached: Codable, Sendable {
        public var macro: MacroReference
        public var macroRole: String
        public var attributeSyntax: Syntax
        public var declSyntax: Syntax
        public var parentDeclSyntax: Syntax?
        public var extendedTypeSyntax: Syntax?
        public var conformanceListSyntax: Syntax?
        /// The enclosing declarations, innermost first, with their bodies emptied (attributes kept).
        public var lexicalContext: [Syntax]?
    }

    public struct ExpandFreestanding: Codable, Sendable {
        public var macro: MacroReference
        public var syntax: Syntax
    }

    public struct Capability: Codable, Sendable {
        public var protocolVersion: Int
    }

    public struct GetCapability: Codable, Sendable {
        public var capability: Capability?
    }

    public struct Empty: Codable, Sendable {}

    /// A message from the compiler; exactly one field is set.
    public struct HostMessage: Decodable, Sendable {
        public var getCapability: GetCapability?
        public var expandAttachedMacro: ExpandAttached?
        public var expandFreestandingMacro: ExpandFreestanding?
        public var loadPluginLibrary: Empty?
    }

    // MARK: - Responses

    struct Position: Encodable {
        var fileName: String
        var offset: Int
    }

    struct Range: Encodable {
        var fileName: String
        var startOffset: Int
        var endOffset: Int
    }

    struct Change: Encodable {
        var range: Range
        var newText: String
    }

    struct FixIt: Encodable {
        var message: String
        var changes: [Change]
    }

    struct Note: Encodable {
        var position: Position
        var message: String
    }

    struct Diagnostic: Encodable {
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
            highlights = diagnostic.highlights.map { Range(fileName: fileName, startOffset: $0.lowerBound, endOffset: $0.upperBound) }
            notes = []
            fixIts = diagnostic.fixIts.map { fixIt in
                FixIt(message: fixIt.message, changes: fixIt.changes.map {
                    Change(range: Range(fileName: fileName, startOffset: $0.start, endOffset: $0.end), newText: $0.newText)
                })
            }
        }
    }

    struct ExpandResult: Encodable {
        var expandedSource: String?
        var diagnostics: [Diagnostic]

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let expandedSource { try container.encode(expandedSource, forKey: .expandedSource) } else {
                try container.encodeNil(forKey: .expandedSource)
            }
            try container.encode(diagnostics, forKey: .diagnostics)
        }

        enum CodingKeys: String, CodingKey { case expandedSource, diagnostics }
    }

    struct CapabilityResult: Encodable {
        var capability: Capability
    }

    struct LoadResult: Encodable {
        var loaded: Bool
        var diagnostics: [Diagnostic]
    }

    enum Response: Encodable {
        case getCapabilityResult(CapabilityResult)
        case expandMacroResult(ExpandResult)
        case loadPluginLibraryResult(LoadResult)

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case .getCapabilityResult(let value): try container.encode(value, forKey: Key("getCapabilityResult"))
            case .expandMacroResult(let value): try container.encode(value, forKey: Key("expandMacroResult"))
            case .loadPluginLibraryResult(let value): try container.encode(value, forKey: Key("loadPluginLibraryResult"))
            }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}
