@testable import DefaultsMacroKit
import Foundation
import Testing

/// The JSON protocol as the compiler speaks it (see macro-plugin-protocol.md).
@Suite struct DispatcherTests {
    func respond(_ json: String) throws -> [String: Any] {
        let data = try #require(MacroDispatcher.respond(to: Data(json.utf8)))
        return try #require(try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
    }

    @Test func capability() throws {
        let answer = try respond(#"{"getCapability":{"capability":{"protocolVersion":7}}}"#)
        let capability = (answer["getCapabilityResult"] as? [String: Any])?["capability"] as? [String: Any]
        #expect(capability?["protocolVersion"] as? Int == 7)
    }

    @Test func loadPluginLibrary() throws {
        let answer = try respond(#"{"loadPluginLibrary":{"libraryPath":"/x","moduleName":"M"}}"#)
        #expect((answer["loadPluginLibraryResult"] as? [String: Any])?["loaded"] as? Bool == false)
    }

    @Test func unknownMessagesAndKeysAreIgnored() throws {
        #expect(MacroDispatcher.respond(to: Data(#"{"somethingNew":{}}"#.utf8)) == nil)
        #expect(MacroDispatcher.respond(to: Data("not json".utf8)) == nil)
        let answer = try respond(#"{"getCapability":{"capability":{"protocolVersion":7,"features":["x"]},"staticBuildConfiguration":"{}"}}"#)
        #expect(answer["getCapabilityResult"] != nil)
    }

    func attached(typeName: String, role: String, attribute: String, decl: String, offset: Int = 10) -> String {
        func node(_ kind: String, _ source: String) -> String {
            let escaped = String(data: try! JSONSerialization.data(withJSONObject: source, options: [.fragmentsAllowed]), encoding: .utf8)!
            return #"{"kind":"\#(kind)","source":\#(escaped),"location":{"fileID":"M/f.swift","fileName":"/tmp/f.swift","offset":\#(offset),"line":2,"column":1}}"#
        }
        return #"{"expandAttachedMacro":{"macro":{"moduleName":"ObservableDefaultsMacros","typeName":"\#(typeName)","name":"X"},"macroRole":"\#(role)","discriminator":"$d","attributeSyntax":\#(node("attribute", attribute)),"declSyntax":\#(node("declaration", decl)),"lexicalContext":[],"futureField":1}}"#
    }

    @Test func expansionResult() throws {
        let answer = try respond(attached(
            typeName: "DefaultsBackedMacro", role: "peer", attribute: "@DefaultsBacked", decl: "\n  var x = 1 { didSet {} }"))
        let result = try #require(answer["expandMacroResult"] as? [String: Any])
        #expect(result["expandedSource"] as? String == "private func _od_didSet_x(_ oldValue: Swift::Int) {}")
        #expect((result["diagnostics"] as? [Any])?.isEmpty == true)
    }

    @Test func diagnosticWireFormat() throws {
        let answer = try respond(attached(typeName: "DefaultsBackedMacro", role: "accessor", attribute: "@DefaultsBacked", decl: "\n  let x = 1"))
        let result = try #require(answer["expandMacroResult"] as? [String: Any])
        #expect(result["expandedSource"] is NSNull)
        let diagnostic = try #require((result["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["severity"] as? String == "error")
        let position = diagnostic["position"] as? [String: Any]
        #expect(position?["fileName"] as? String == "/tmp/f.swift")
        #expect(position?["offset"] as? Int == 13)
        let fixIt = try #require((diagnostic["fixIts"] as? [[String: Any]])?.first)
        let change = try #require((fixIt["changes"] as? [[String: Any]])?.first)
        #expect(change["newText"] as? String == "var")
        let range = change["range"] as? [String: Any]
        #expect(range?["startOffset"] as? Int == 13 && range?["endOffset"] as? Int == 16)
        #expect(diagnostic["highlights"] is [Any] && diagnostic["notes"] is [Any])
    }

    @Test func freestandingIsRejectedWithAnError() throws {
        let json = ##"{"expandFreestandingMacro":{"macro":{"moduleName":"M","typeName":"T","name":"x"},"discriminator":"d","syntax":{"kind":"expression","source":"x","location":{"fileID":"a","fileName":"f","offset":3,"line":1,"column":1}}}}"##
        let result = try #require(try respond(json)["expandMacroResult"] as? [String: Any])
        #expect((result["diagnostics"] as? [Any])?.count == 1)
    }

    @Test func unknownMacroNameIsAnErrorNotAnEmptyExpansion() throws {
        let answer = try respond(attached(typeName: "NoSuchMacro", role: "peer", attribute: "@NoSuch", decl: "\n  var x = 1"))
        let result = try #require(answer["expandMacroResult"] as? [String: Any])
        #expect(result["expandedSource"] is NSNull)
        let diagnostic = try #require((result["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["message"] as? String == "this plugin has no macro named 'NoSuchMacro'")
    }

    /// `MacroName` lists exactly the macros the library declares, each with the attribute name users write.
    @Test func macroNamesMatchTheLibrarysDeclarations() throws {
        let declarations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/ObservableDefaults/Macros/Declarations/ObservableDefaultsMacros.swift")
        let text = try String(contentsOf: declarations, encoding: .utf8)
        var declared: [String: String] = [:]
        for match in text.matches(of: /public macro (\w+)\([^#]*#externalMacro\(module: "ObservableDefaultsMacros", type: "(\w+)"\)/) {
            declared[String(match.2)] = String(match.1)
        }
        #expect(declared.count == MacroName.allCases.count, "\(declared)")
        for name in MacroName.allCases {
            #expect(declared[name.rawValue] == name.attributeName, "\(name)")
        }
    }
}
