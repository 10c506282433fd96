extension ClassExpansion {
    /// The extension role: the `Observable` conformance of a class.
    /// - Parameters:
    ///   - decl: The class declaration's source.
    ///   - extendedType: The type to extend, as the compiler wrote it.
    ///   - conformances: The protocols the compiler asks for; `nil` means all of them.
    /// - Returns: The extension, or ``ExpansionResult/empty`` when nothing is to be added.
    public static func extensions(decl: String, extendedType: String, conformances: String?) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let type = parser.parseTypeDecl(), type.keyword == "class" else { return .empty }
        if let conformances, !conformances.contains("Observable") { return .empty }
        return ExpansionResult(source: "extension \(extendedType.trimmed): ObservableDefaults::_DefaultsObservable {\n}")
    }
}
