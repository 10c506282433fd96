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
        let answer = try respond(
            #"{"getCapability":{"capability":{"protocolVersion":7,"features":["x"]},"staticBuildConfiguration":"{}"}}"#)
        #expect(answer["getCapabilityResult"] != nil)
    }

    func attached(
        typeName: String, role: String, attribute: String, decl: String, offset: Int = 10, context: [String] = []
    ) -> String {
        func node(_ kind: String, _ source: String) -> String {
            let escaped = String(
                data: try! JSONSerialization.data(withJSONObject: source, options: [.fragmentsAllowed]), encoding: .utf8
            )!
            return
                #"{"kind":"\#(kind)","source":\#(escaped),"location":{"fileID":"M/f.swift","fileName":"/tmp/f.swift","offset":\#(offset),"line":2,"column":1}}"#
        }
        return
            #"{"expandAttachedMacro":{"macro":{"moduleName":"ObservableDefaultsMacros","typeName":"\#(typeName)","name":"X"},"macroRole":"\#(role)","discriminator":"$d","attributeSyntax":\#(node("attribute", attribute)),"declSyntax":\#(node("declaration", decl)),"lexicalContext":[\#(context.map { node("declaration", $0) }.joined(separator: ","))],"futureField":1}}"#
    }

    @Test func expansionResult() throws {
        let answer = try respond(
            attached(
                typeName: "DefaultsBackedMacro", role: "peer", attribute: "@DefaultsBacked",
                decl: "\n  var x = 1 { didSet {} }"))
        let result = try #require(answer["expandMacroResult"] as? [String: Any])
        #expect(result["expandedSource"] as? String == "private func _od_didSet_x(_ oldValue: Swift::Int) {}")
        #expect((result["diagnostics"] as? [Any])?.isEmpty == true)
    }

    @Test func diagnosticWireFormat() throws {
        let answer = try respond(
            attached(
                typeName: "DefaultsBackedMacro", role: "accessor", attribute: "@DefaultsBacked", decl: "\n  let x = 1"))
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
        let json =
            ##"{"expandFreestandingMacro":{"macro":{"moduleName":"M","typeName":"T","name":"x"},"discriminator":"d","syntax":{"kind":"expression","source":"x","location":{"fileID":"a","fileName":"f","offset":3,"line":1,"column":1}}}}"##
        let result = try #require(try respond(json)["expandMacroResult"] as? [String: Any])
        #expect((result["diagnostics"] as? [Any])?.count == 1)
    }

    @Test func unknownMacroNameIsAnErrorNotAnEmptyExpansion() throws {
        let answer = try respond(
            attached(typeName: "NoSuchMacro", role: "peer", attribute: "@NoSuch", decl: "\n  var x = 1"))
        let result = try #require(answer["expandMacroResult"] as? [String: Any])
        #expect(result["expandedSource"] is NSNull)
        let diagnostic = try #require((result["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["message"] as? String == "this plugin has no macro named 'NoSuchMacro'")
    }

    /// `MacroName` lists exactly the macros the library declares, each with the attribute name users write.
    @Test func macroNamesMatchTheLibrarysDeclarations() throws {
        let declarations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/ObservableDefaults/Macros/Declarations")
        let text = try ["ObservableDefaultsMacros.swift", "ObservableCloudMacros.swift"]
            .map { try String(contentsOf: declarations.appendingPathComponent($0), encoding: .utf8) }.joined(
                separator: "\n")
        var declared: [String: String] = [:]
        for match in text.matches(
            of: /public macro (\w+)\([^#]*#externalMacro\(module: "ObservableDefaultsMacros", type: "(\w+)"\)/)
        {
            declared[String(match.2)] = String(match.1)
        }
        #expect(declared.count == MacroName.allCases.count, "\(declared)")
        for name in MacroName.allCases {
            #expect(declared[name.rawValue] == name.attributeName, "\(name)")
        }
    }

    func expandResult(_ json: String) throws -> [String: Any] {
        try #require(try respond(json)["expandMacroResult"] as? [String: Any])
    }

    @Test func cloudMacroNamesRouteToTheirKindAndFamily() throws {
        #expect(MacroName(rawValue: "ObservableCloudMacro")?.kind == .classMacro)
        #expect(MacroName(rawValue: "CloudBackedMacro")?.kind == .persistedProperty)
        #expect(MacroName(rawValue: "CloudKeyMacro")?.kind == .marker)
        #expect(
            MacroName.allCases.filter { $0.family == .cloud }.map(\.attributeName) == [
                "ObservableCloud", "CloudBacked", "CloudKey"
            ])
        #expect(MacroName.allCases.filter { $0.family == nil } == [.observableOnly, .ignore])
        let members = try expandResult(
            attached(
                typeName: "ObservableCloudMacro", role: "member", attribute: "@ObservableCloud(prefix: \"p_\")",
                decl: "\n@ObservableCloud(prefix: \"p_\")\nfinal class Fleet {\n    var workers = 4\n}"))
        let source = try #require(members["expandedSource"] as? String)
        #expect(
            source.hasPrefix(
                "private let _od_registrar = Observation::ObservationRegistrar()\n\nprivate let _od_binding = ObservableDefaults::_CloudObjectBinding(prefix: \"p_\""
            ))
        #expect(
            source.contains(
                "private let _od_workers = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \"workers\", 4))")
        )
        let attribute = MacroDispatcher.expand(
            PluginMessages.ExpandAttached(
                macro: .init(
                    moduleName: "ObservableDefaultsMacros", typeName: "ObservableCloudMacro", name: "ObservableCloud"),
                macroRole: "memberAttribute",
                attributeSyntax: .init(
                    kind: "attribute", source: "@ObservableCloud", location: .init(fileName: "f", offset: 0)),
                declSyntax: .init(
                    kind: "declaration", source: "\n    var workers = 4", location: .init(fileName: "f", offset: 30)),
                parentDeclSyntax: .init(
                    kind: "declaration", source: "@ObservableCloud\nfinal class Fleet {",
                    location: .init(fileName: "f", offset: 0))))
        #expect(attribute.source == "@CloudBacked")
        let key = try expandResult(
            attached(
                typeName: "CloudKeyMacro", role: "peer", attribute: "@CloudKey(keyValueStoreKey: \"k\")",
                decl: "@CloudKey(keyValueStoreKey: \"k\") var x = 1"))
        #expect(key["expandedSource"] as? String == "")
    }

    /// Where a property macro may be used: its own family's class (the shared `@ObservableOnly`: either), with
    /// the error naming the class macro(s) otherwise; in the other family's class it expands as usual (the
    /// class macro reports it with a fix-it, and declares the slot its accessors use).
    @Test func propertyMacroContexts() throws {
        let cloudClass = "\n@ObservableCloud(prefix: \"x\")\nfinal class Fleet {}"
        let defaultsClass = "\n@MainActor @ObservableDefaults final class Settings {}"
        let plainClass = "\nfinal class Plain {}"
        func accessors(_ typeName: String, _ attributeName: String, in context: String) throws -> (
            source: String?, messages: [String]
        ) {
            let result = try expandResult(
                attached(
                    typeName: typeName, role: "accessor", attribute: "@" + attributeName,
                    decl: "@\(attributeName) var x = 1", context: [context]))
            let messages = (result["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
            return (result["expandedSource"] as? String, messages)
        }
        let inCloud = try accessors("CloudBackedMacro", "CloudBacked", in: cloudClass)
        #expect(inCloud.messages.isEmpty && inCloud.source?.contains("_od_binding.set(newValue, slot: _od_x") == true)
        let onlyInCloud = try accessors("ObservableOnlyMacro", "ObservableOnly", in: cloudClass)
        #expect(onlyInCloud.messages.isEmpty && onlyInCloud.source?.contains("_od_x.set(newValue") == true)
        let onlyInDefaults = try accessors("ObservableOnlyMacro", "ObservableOnly", in: defaultsClass)
        #expect(onlyInDefaults == onlyInCloud)

        let cloudOutside = try accessors("CloudBackedMacro", "CloudBacked", in: plainClass)
        #expect(cloudOutside.source == nil)
        #expect(
            cloudOutside.messages == ["'@CloudBacked' can only be used on a property of an '@ObservableCloud' class"])
        let cloudInStruct = try accessors("CloudBackedMacro", "CloudBacked", in: "\n@ObservableCloud struct S {}")
        #expect(
            cloudInStruct.messages == ["'@CloudBacked' can only be used on a property of an '@ObservableCloud' class"])
        let onlyOutside = try accessors("ObservableOnlyMacro", "ObservableOnly", in: plainClass)
        #expect(
            onlyOutside.messages == [
                "'@ObservableOnly' can only be used on a property of an '@ObservableDefaults' or '@ObservableCloud' class"
            ])

        for (typeName, attributeName, context) in [
            ("CloudBackedMacro", "CloudBacked", defaultsClass), ("DefaultsBackedMacro", "DefaultsBacked", cloudClass)
        ] {
            let foreign = try accessors(typeName, attributeName, in: context)
            #expect(foreign.source == inCloud.source && foreign.messages.isEmpty, "\(attributeName)")
        }
    }
}
