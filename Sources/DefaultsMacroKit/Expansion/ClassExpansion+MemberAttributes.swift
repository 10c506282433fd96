extension ClassExpansion {
    /// The member-attribute role: the family's persisted attribute (`@DefaultsBacked`, `@CloudBacked`) or
    /// `@ObservableOnly` for a stored `var` that has none of them.
    /// - Parameters:
    ///   - member: The member declaration's source.
    ///   - parent: The class declaration's source.
    ///   - attribute: The class macro's attribute source (for `observeFirst`).
    ///   - family: The macro family of the class macro.
    /// - Returns: The attribute to add, or ``ExpansionResult/empty``.
    public static func memberAttributes(
        member: String, parent: String, attribute: String, family: MacroFamily = .defaults
    ) -> ExpansionResult {
        var parentParser = DeclParser(typeHeaderOf: parent)
        // A second class macro on the class adds nothing (its member role reports the conflict).
        guard let type = parentParser.parseTypeDecl(), type.keyword == "class",
            MacroFamily.of(type).map({ $0 == family }) ?? true
        else { return .empty }
        var attributeParser = DeclParser(attribute)
        let attributeSyntax = attributeParser.parseAttributes().first
        let (options, _) = family.options.readOptions(
            attributeSyntax, locator: SourceLocator(nodeOffset: 0, triviaLength: 0))
        var parser = DeclParser(member)
        guard let syntax = parser.parseMember() else { return .empty }
        let (role, explicit) = PropertyRole.of(syntax, observeFirst: options.observeFirst)
        // Several bindings in one declaration are reported by the member role (an accessor macro cannot apply).
        guard !explicit, syntax.bindings.count == 1 else { return .empty }
        switch role {
        case .persisted: return ExpansionResult(source: "@" + family.persistedAttribute)
        case .observableOnly: return ExpansionResult(source: "@" + MacroName.observableOnly.attributeName)
        case .ignored, .notApplicable: return .empty
        }
    }
}
