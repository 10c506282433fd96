/// Expansions of a class macro (`@ObservableDefaults`, `@ObservableCloud`): members (registrar, binding,
/// initializer, the family's configuration members and observation starter), member attributes
/// (`@DefaultsBacked` / `@CloudBacked` / `@ObservableOnly`) and the `Observable` conformance.
public enum ClassExpansion {
    struct Context {
        let family: MacroFamily
        let type: TypeDeclSyntax
        let options: any ClassMacroOptions
        let optionDiagnostics: [MacroDiagnostic]

        var isMainActor: Bool {
            options.defaultIsolationIsMainActor || hasMainActorAttribute
        }

        /// The class is written `@MainActor`.
        var hasMainActorAttribute: Bool {
            type.attributes.contains { $0.name == "MainActor" }
        }
    }

    static func context(decl: String, attribute: String, attributeLocator: SourceLocator, family: MacroFamily)
        -> Context?
    {
        var parser = DeclParser(decl)
        guard let type = parser.parseTypeDecl() else { return nil }
        var attributeParser = DeclParser(attribute)
        let attributeSyntax = attributeParser.parseAttributes().first
        let (options, diagnostics) = family.options.readOptions(attributeSyntax, locator: attributeLocator)
        return Context(family: family, type: type, options: options, optionDiagnostics: diagnostics)
    }

    // MARK: - member

    /// The member role: the registrar, the binding, the family's configuration members (for custom
    /// initializers), the slots of the persisted properties, the initializer (with `autoInit`) and what starts
    /// the observation (`observerStarter` and `update(_:_:)`; for the cloud family `CloudObservation`).
    /// - Parameters:
    ///   - decl: The class declaration's source.
    ///   - declLocator: Maps offsets in `decl` to file offsets (for diagnostics).
    ///   - attribute: The class macro's attribute source (`@ObservableDefaults(…)`).
    ///   - attributeLocator: Maps offsets in `attribute` to file offsets.
    ///   - family: The macro family of the class macro.
    /// - Returns: The generated members and the diagnostics; no source when the declaration is not a class,
    ///   or when another family's class macro comes first on it.
    public static func members(
        decl: String, declLocator: SourceLocator, attribute: String, attributeLocator: SourceLocator,
        family: MacroFamily = .defaults
    ) -> ExpansionResult {
        let macroName = family.classAttribute
        guard
            let context = context(decl: decl, attribute: attribute, attributeLocator: attributeLocator, family: family)
        else {
            return ExpansionResult(
                source: nil,
                diagnostics: [
                    MacroDiagnostic(
                        .error, "'@\(macroName)' can only be applied to a class",
                        at: attributeLocator.file(attributeLocator.triviaLength))
                ])
        }
        let type = context.type
        var diagnostics = context.optionDiagnostics
        guard type.keyword == "class" else {
            let article = type.keyword == "enum" || type.keyword == "actor" || type.keyword == "extension" ? "an" : "a"
            diagnostics.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' can only be applied to a class, not to \(article) \(type.keyword)",
                    at: declLocator.file(type.keywordStart),
                    highlights: [declLocator.file(type.keywordStart)..<declLocator.file(type.keywordEnd)],
                    fixIts: type.keyword == "struct"
                        ? [
                            .init(
                                message: "make it a class",
                                changes: [
                                    .init(
                                        start: declLocator.file(type.keywordStart),
                                        end: declLocator.file(type.keywordEnd), newText: "final class")
                                ])
                        ] : []))
            return ExpansionResult(source: nil, diagnostics: diagnostics)
        }
        if let conflict = classMacroConflict(type, family: family, locator: declLocator) {
            return ExpansionResult(source: nil, diagnostics: [conflict])
        }
        diagnostics += mixedFamilies(type, family: family, locator: declLocator)
        for member in type.members where member.bindings.count > 1 {
            let role = PropertyRole.of(member, observeFirst: context.options.observeFirst).role
            guard role != .notApplicable && role != .ignored else { continue }
            diagnostics.append(severalBindings(member, source: decl, locator: declLocator, macroName: macroName))
        }
        diagnostics += keyWarnings(
            type, observeFirst: context.options.observeFirst, family: family, locator: declLocator)
        // Argument and member errors still produce the members, so the compiler reports only the real problem.
        return ExpansionResult(source: context.options.memberText(context), diagnostics: diagnostics)
    }
}
