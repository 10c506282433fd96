import Foundation

/// Turns one compiler message into the plugin's answer: the whole plugin logic except the framing.
public enum MacroDispatcher {
    /// The protocol version this plugin speaks.
    public static let protocolVersion = 7

    /// The JSON answer to the JSON `message`, or `nil` when the message needs no answer.
    public static func respond(to message: Data) -> Data? {
        guard let host = try? JSONDecoder().decode(PluginMessages.HostMessage.self, from: message) else { return nil }
        let response: PluginMessages.Response
        if host.getCapability != nil {
            response = .getCapabilityResult(.init(capability: .init(protocolVersion: protocolVersion)))
        } else if let request = host.expandAttachedMacro {
            let result = expand(request)
            let fileName = request.declSyntax.location.fileName
            response = .expandMacroResult(.init(
                expandedSource: result.source,
                diagnostics: result.diagnostics.map { PluginMessages.Diagnostic($0, fileName: fileName) }))
        } else if let request = host.expandFreestandingMacro {
            response = .expandMacroResult(.init(expandedSource: nil, diagnostics: [
                PluginMessages.Diagnostic(
                    MacroDiagnostic(.error, "'\(request.macro.typeName)' is not a freestanding macro", at: request.syntax.location.offset),
                    fileName: request.syntax.location.fileName),
            ]))
        } else if host.loadPluginLibrary != nil {
            response = .loadPluginLibraryResult(.init(loaded: false, diagnostics: []))
        } else {
            return nil
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(response)
    }

    /// Expands one attached macro role.
    public static func expand(_ request: PluginMessages.ExpandAttached) -> ExpansionResult {
        let decl = request.declSyntax
        let attribute = request.attributeSyntax
        switch (request.macro.typeName, request.macroRole) {
        case ("ObservableDefaultsMacro", "member"):
            return ClassExpansion.members(
                decl: decl.source, declLocator: decl.locator, attribute: attribute.source, attributeLocator: attribute.locator)
        case ("ObservableDefaultsMacro", "memberAttribute"):
            return ClassExpansion.memberAttributes(
                member: decl.source, parent: request.parentDeclSyntax?.source ?? "", attribute: attribute.source)
        case ("ObservableDefaultsMacro", "extension"), ("ObservableDefaultsMacro", "conformance"):
            return ClassExpansion.extensions(
                decl: decl.source, extendedType: request.extendedTypeSyntax?.source ?? "",
                conformances: request.conformanceListSyntax?.source)
        case ("DefaultsBackedMacro", "accessor"), ("ObservableOnlyMacro", "accessor"):
            let name = request.macro.typeName == "DefaultsBackedMacro" ? "DefaultsBacked" : "ObservableOnly"
            if let context = request.lexicalContext?.first,
               let problem = PropertyExpansion.contextProblem(macroName: name, enclosingType: context.source, attribute: attribute) {
                return ExpansionResult(source: nil, diagnostics: [problem])
            }
            return name == "DefaultsBacked"
                ? PropertyExpansion.defaultsBackedAccessors(decl: decl.source, locator: decl.locator)
                : PropertyExpansion.observableOnlyAccessors(decl: decl.source, locator: decl.locator)
        case ("DefaultsBackedMacro", "peer"):
            return PropertyExpansion.defaultsBackedPeers(decl: decl.source)
        case ("ObservableOnlyMacro", "peer"):
            return PropertyExpansion.observableOnlyPeers(decl: decl.source)
        default:
            // `@Ignore` and `@DefaultsKey` are markers: they expand to nothing.
            return .empty
        }
    }
}
