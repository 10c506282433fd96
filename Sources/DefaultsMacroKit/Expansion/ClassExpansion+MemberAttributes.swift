extension ClassExpansion {
    /// The member-attribute role: `@DefaultsBacked` or `@ObservableOnly` for a stored `var` that has neither.
    /// - Parameters:
    ///   - member: The member declaration's source.
    ///   - parent: The class declaration's source.
    ///   - attribute: The `@ObservableDefaults(…)` attribute's source (for `observeFirst`).
    ///   - family: The macro family of the class macro.
    /// - Returns: The attribute to add, or ``ExpansionResult/empty``.
    public static func memberAttributes(member: String, parent: String, attribute: String, family: MacroFamily = .defaults) -> ExpansionResult {
        var parentParser = DeclParser(typeHeaderOf: parent)
        guard let type = parentParser.parseTypeDecl(), type.keyword == "class" else { return .empty }
        var attributeParser = DeclParser(attribute)
        let attributeSyntax = attributeParser.parseAttributes().first
        let (options, _) = ObservableDefaultsOptions.read(attributeSyntax, locator: SourceLocator(nodeOffset: 0, triviaLength: 0))
        var parser = DeclParser(member)
        guard let syntax = parser.parseMember() else { return .empty }
        let (role, explicit) = PropertyRole.of(syntax, observeFirst: options.observeFirst, family: family)
        // Several bindings in one declaration are reported by the member role (an accessor macro cannot apply).
        guard !explicit, syntax.bindings.count == 1 else { return .empty }
        switch role {
        case .persisted: return ExpansionResult(source: "@" + family.persistedAttribute)
        case .observableOnly: return ExpansionResult(source: "@" + MacroName.observableOnly.attributeName)
        case .ignored, .notApplicable: return .empty
        }
    }
}
