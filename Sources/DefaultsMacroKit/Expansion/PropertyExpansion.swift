/// Expansions of the property macros `@DefaultsBacked` / `@CloudBacked` and `@ObservableOnly` (accessor and
/// peer roles).
///
/// A property with a declaration default gets its storage initialized inline with that default and plain
/// `get`/`set` accessors; only an `@ObservableOnly` property without one gets an `init` accessor. The
/// compiler's definite-initialization pass is superlinear in the number of init-accessor properties of a
/// class (a 400-property class took a minute to compile with one per property); without them it is linear.
public enum PropertyExpansion {
    /// The names of the generated peers for a property.
    static func storageName(_ name: String) -> String { "_od_" + name }
    static func willSetName(_ name: String) -> String { "_od_willSet_" + name }
    static func didSetName(_ name: String) -> String { "_od_didSet_" + name }

    struct Property {
        let member: MemberSyntax
        let binding: BindingSyntax
        let name: String
        /// The declared type, or one inferred from a literal initializer (only for observers).
        var type: String? { binding.type?.trimmed }
        var observerType: String? { type ?? LiteralType.infer(binding.initializer) }
        var hasWillSet: Bool { binding.accessor("willSet") != nil }
        var hasDidSet: Bool { binding.accessor("didSet") != nil }
        var keyPath: String { "\\." + binding.nameText }
    }

    static func property(_ member: MemberSyntax) -> Property? {
        guard member.kind == .variable, member.bindings.count == 1, let binding = member.bindings.first,
            let name = binding.name, binding.isStored
        else { return nil }
        return Property(member: member, binding: binding, name: name)
    }

    /// An error when a property macro is used outside a class of a class macro (the generated accessors need
    /// the class's registrar and binding); `enclosingType` is the innermost lexical context. A property macro
    /// of another family than the class's (`@CloudBacked` in an `@ObservableDefaults` class) is no problem
    /// here: the class macro reports it, with a fix-it, and declares its slot, so its accessors compile.
    /// - Parameters:
    ///   - macroName: The property macro's attribute name, for the message.
    ///   - enclosingType: The source of the innermost enclosing declaration.
    ///   - attribute: The property macro's attribute, for the position.
    ///   - families: The families whose class the macro belongs in, for the message (`@ObservableOnly`: all).
    /// - Returns: The error, or `nil` when the enclosing declaration is a class with a class macro.
    public static func contextProblem(
        macroName: String, enclosingType: String, attribute: PluginMessages.Syntax,
        families: [MacroFamily] = [.defaults]
    ) -> MacroDiagnostic? {
        var parser = DeclParser(enclosingType)
        guard let type = parser.parseTypeDecl() else { return nil }
        if type.keyword == "class" && MacroFamily.of(type) != nil { return nil }
        let attributeTokens = Lexer.tokenize(attribute.source)
        let start = attribute.locator.file(attributeTokens.first?.start ?? 0)
        let end = attribute.locator.file(attributeTokens.last?.end ?? 0)
        let classes = families.map { "'@\($0.classAttribute)'" }.joined(separator: " or ")
        return MacroDiagnostic(
            .error, "'@\(macroName)' can only be used on a property of an \(classes) class",
            at: start, highlights: [start..<end])
    }

    /// Whether a type annotation names an Optional (`T?`, `T!`, `Optional<T>`).
    static func isOptional(_ type: String) -> Bool {
        let text = type.trimmed
        return text.hasSuffix("?") || text.hasSuffix("!") || text.hasPrefix("Optional<")
            || text.hasPrefix("Swift.Optional<")
            || text.hasPrefix("Swift::Optional<")
    }

    static func observerMethods(_ property: Property) -> [String] {
        guard let type = property.observerType else { return [] }
        var lines: [String] = []
        if let willSet = property.binding.accessor("willSet") {
            let parameter = willSet.parameter ?? "newValue"
            lines.append("private func \(willSetName(property.name))(_ \(parameter): \(type)) {\(willSet.body)}")
        }
        if let didSet = property.binding.accessor("didSet") {
            let parameter = didSet.parameter ?? "oldValue"
            lines.append("private func \(didSetName(property.name))(_ \(parameter): \(type)) {\(didSet.body)}")
        }
        return lines
    }
}
