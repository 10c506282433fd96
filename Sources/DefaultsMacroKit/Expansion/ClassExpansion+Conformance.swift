extension ClassExpansion {
    /// The extension role: the `Observable` conformance of a class.
    /// - Parameters:
    ///   - decl: The class declaration's source.
    ///   - extendedType: The type to extend, as the compiler wrote it.
    ///   - conformances: The protocols the compiler asks for; `nil` means all of them.
    ///   - family: The macro family of the class macro.
    /// - Returns: The extension, or ``ExpansionResult/empty`` when nothing is to be added (also for a second
    ///   class macro on the class: the first one adds the conformance).
    public static func extensions(
        decl: String, extendedType: String, conformances: String?, family: MacroFamily = .defaults
    ) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let type = parser.parseTypeDecl(), type.keyword == "class",
            MacroFamily.of(type).map({ $0 == family }) ?? true
        else { return .empty }
        if let conformances, !conformances.contains("Observable") { return .empty }
        return ExpansionResult(
            source: "extension \(extendedType.trimmed): ObservableDefaults::_DefaultsObservable {\n}")
    }
}
