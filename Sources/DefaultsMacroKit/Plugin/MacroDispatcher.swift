/// Turns one compiler message into the plugin's answer: the whole plugin logic except the framing.
public enum MacroDispatcher {
    /// The protocol version this plugin speaks.
    public static let protocolVersion = 7

    /// The JSON answer to the JSON `message` (UTF-8), or `nil` when the message needs no answer.
    public static func respond<Message: Collection<UInt8>>(to message: Message) -> [UInt8]? {
        guard let json = PluginJSON(parsing: message), let host = PluginMessages.HostMessage(json: json) else {
            return nil
        }
        let response: PluginMessages.Response
        if host.getCapability != nil {
            response = .getCapabilityResult(.init(capability: .init(protocolVersion: protocolVersion)))
        } else if let request = host.expandAttachedMacro {
            let result = expand(request)
            let fileName = request.declSyntax.location.fileName
            response = .expandMacroResult(
                .init(
                    expandedSource: result.source,
                    diagnostics: result.diagnostics.map { PluginMessages.Diagnostic($0, fileName: fileName) }))
        } else if let request = host.expandFreestandingMacro {
            response = .expandMacroResult(
                .init(
                    expandedSource: nil,
                    diagnostics: [
                        PluginMessages.Diagnostic(
                            MacroDiagnostic(
                                .error, "'\(request.macro.typeName)' is not a freestanding macro",
                                at: request.syntax.location.offset),
                            fileName: request.syntax.location.fileName)
                    ]))
        } else if host.loadPluginLibrary != nil {
            response = .loadPluginLibraryResult(.init(loaded: false, diagnostics: []))
        } else {
            return nil
        }
        return response.json.serialized
    }

    /// Expands one attached macro role.
    public static func expand(_ request: PluginMessages.ExpandAttached) -> ExpansionResult {
        let decl = request.declSyntax
        let attribute = request.attributeSyntax
        guard let macro = MacroName(rawValue: request.macro.typeName) else {
            return ExpansionResult(
                source: nil,
                diagnostics: [
                    MacroDiagnostic(
                        .error, "this plugin has no macro named '\(request.macro.typeName)'",
                        at: attribute.location.offset)
                ])
        }
        // The shared macros (`@ObservableOnly`, `@Ignore`) take the family of the class they are used in.
        let family = macro.family ?? enclosingFamily(request) ?? .defaults
        switch (macro.kind, MacroRole(rawValue: request.macroRole)) {
        case (.classMacro, .member):
            return ClassExpansion.members(
                decl: decl.source, declLocator: decl.locator, attribute: attribute.source,
                attributeLocator: attribute.locator,
                family: family)
        case (.classMacro, .memberAttribute):
            return ClassExpansion.memberAttributes(
                member: decl.source, parent: request.parentDeclSyntax?.source ?? "", attribute: attribute.source,
                family: family)
        case (.classMacro, .extension), (.classMacro, .conformance):
            return ClassExpansion.extensions(
                decl: decl.source, extendedType: request.extendedTypeSyntax?.source ?? "",
                conformances: request.conformanceListSyntax?.source, family: family)
        case (.persistedProperty, .accessor), (.observableOnlyProperty, .accessor):
            if let enclosing = request.lexicalContext?.first,
                let problem = PropertyExpansion.contextProblem(
                    macroName: macro.attributeName, enclosingType: enclosing.source, attribute: attribute,
                    families: macro.family.map { [$0] } ?? MacroFamily.all)
            {
                return ExpansionResult(source: nil, diagnostics: [problem])
            }
            return macro.kind == .persistedProperty
                ? PropertyExpansion.defaultsBackedAccessors(
                    decl: decl.source, locator: decl.locator, attributeName: macro.attributeName,
                    attribute: attribute.source, attributeLocator: attribute.locator, family: family)
                : PropertyExpansion.observableOnlyAccessors(decl: decl.source, locator: decl.locator)
        case (.persistedProperty, .peer):
            return PropertyExpansion.defaultsBackedPeers(decl: decl.source)
        case (.observableOnlyProperty, .peer):
            return PropertyExpansion.observableOnlyPeers(decl: decl.source)
        case (.marker, .peer) where macro == .defaultsKey || macro == .cloudKey:
            // Nothing, or the error for a key that is not a string literal.
            return PropertyExpansion.keyAttributePeers(
                attribute: attribute.source, locator: attribute.locator, family: family)
        default:
            // `@Ignore` expands to nothing, as does a role a macro does not declare.
            return .empty
        }
    }

    /// The family of the class macro on the innermost enclosing declaration (the request's lexical context,
    /// whose body the compiler leaves out), or `nil`.
    static func enclosingFamily(_ request: PluginMessages.ExpandAttached) -> MacroFamily? {
        guard let context = request.lexicalContext?.first else { return nil }
        var parser = DeclParser(context.source)
        return parser.parseTypeDecl().flatMap(MacroFamily.of)
    }
}
