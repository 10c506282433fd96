/// Expansions of the property macros `@DefaultsBacked` and `@ObservableOnly` (accessor and peer roles).
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
              let name = binding.name, binding.isStored else { return nil }
        return Property(member: member, binding: binding, name: name)
    }

    /// An error when a property macro is used outside an `@ObservableDefaults` class (the generated accessors
    /// need the class's registrar and binding); `enclosingType` is the innermost lexical context.
    public static func contextProblem(macroName: String, enclosingType: String, attribute: PluginMessages.Syntax) -> MacroDiagnostic? {
        var parser = DeclParser(enclosingType)
        guard let type = parser.parseTypeDecl() else { return nil }
        if type.keyword == "class" && type.attributes.contains(where: { $0.name == "ObservableDefaults" }) { return nil }
        let attributeTokens = Lexer.tokenize(attribute.source)
        let start = attribute.locator.file(attributeTokens.first?.start ?? 0)
        let end = attribute.locator.file(attributeTokens.last?.end ?? 0)
        return MacroDiagnostic(
            .error, "'@\(macroName)' can only be used on a property of an '@ObservableDefaults' class",
            at: start, highlights: [start..<end])
    }

    // MARK: - @DefaultsBacked

    /// The accessor role of `@DefaultsBacked`: the getter and setter that go through the property's slot.
    ///
    /// No `init` accessor: the slot is initialized inline with the declaration default, so the property is
    /// a computed one (the compiler keeps the declaration's initializer out of the object's initializers).
    /// - Parameters:
    ///   - decl: The property declaration's source.
    ///   - locator: Maps offsets in `decl` to file offsets (for diagnostics).
    ///   - attributeName: The attribute's name as used, for the messages.
    /// - Returns: The accessors and the diagnostics; no source when there is an error.
    public static func defaultsBackedAccessors(decl: String, locator: SourceLocator, attributeName: String = "DefaultsBacked") -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember() else { return ExpansionResult(source: nil) }
        let diagnostics = PropertyChecks(member: member, locator: locator, macroName: attributeName).diagnostics(requireInitializer: true)
        if diagnostics.contains(where: { $0.severity == .error }) { return ExpansionResult(source: nil, diagnostics: diagnostics) }
        guard let property = property(member) else { return ExpansionResult(source: nil, diagnostics: diagnostics) }
        let storage = storageName(property.name)
        var observers: [String] = []
        if property.hasWillSet { observers.append("willSet: { self.\(willSetName(property.name))($0) }") }
        if property.hasDidSet { observers.append("didSet: { self.\(didSetName(property.name))($0) }") }
        let observerArguments = observers.isEmpty ? "" : ", " + observers.joined(separator: ", ")
        let text = """
            get {
                _od_registrar.access(self, keyPath: \(property.keyPath))
                return \(storage).value
            }
            set {
                _od_binding.set(newValue, slot: \(storage), keyPath: \(property.keyPath), on: self, registrar: _od_registrar\(observerArguments))
            }
            """
        return ExpansionResult(source: text, diagnostics: diagnostics)
    }

    /// The peer role of `@DefaultsBacked`: the moved `willSet`/`didSet` bodies. (The slot is declared by
    /// the class's member role, so a property whose attribute does not type-check causes no second error.)
    /// - Parameter decl: The property declaration's source.
    /// - Returns: The peers, or ``ExpansionResult/empty`` when the property cannot be persisted.
    public static func defaultsBackedPeers(decl: String) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember(), let property = property(member) else { return .empty }
        let lines = observerMethods(property)
        return lines.isEmpty ? .empty : ExpansionResult(source: lines.joined(separator: "\n\n"))
    }

    /// The slot (`_od_<name>`) of a persisted property: its key, declaration default and storage rule;
    /// `nil` when the property cannot be persisted.
    static func slotDeclaration(_ member: MemberSyntax) -> String? {
        guard let property = property(member),
              let initializer = property.binding.initializer ?? (property.type.map(isOptional) == true ? "nil" : nil)
        else { return nil }
        let key: String
        switch PropertyRole.keySource(of: member, attribute: nil) {
        case .literal(let literal): key = StringLiteral.quote(literal)
        case .expression(let expression):
            key = "ObservableDefaults::_defaultsKey(\(expression), property: \(StringLiteral.quote(property.name)))"
        }
        let storage = storageName(property.name)
        let value = initializer.trimmed
        if let type = property.type {
            let factory = isOptional(type) ? "_defaultsOptionalSlot" : "_defaultsSlot"
            return "private let \(storage): ObservableDefaults::_DefaultsSlot<\(type)> = ObservableDefaults::\(factory)(key: \(key), \(value))"
        }
        return "private let \(storage) = ObservableDefaults::_defaultsSlot(key: \(key), \(value))"
    }

    /// Whether a type annotation names an Optional (`T?`, `T!`, `Optional<T>`).
    static func isOptional(_ type: String) -> Bool {
        let text = type.trimmed
        return text.hasSuffix("?") || text.hasSuffix("!") || text.hasPrefix("Optional<") || text.hasPrefix("Swift.Optional<")
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

    // MARK: - @ObservableOnly

    /// The accessor role of `@ObservableOnly`: accessors that go through the registrar and the `_od_<name>` storage.
    /// - Parameters:
    ///   - decl: The property declaration's source.
    ///   - locator: Maps offsets in `decl` to file offsets (for diagnostics).
    /// - Returns: The accessors and the diagnostics; no source when there is an error.
    public static func observableOnlyAccessors(decl: String, locator: SourceLocator) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember() else { return ExpansionResult(source: nil) }
        let diagnostics = PropertyChecks(member: member, locator: locator, macroName: "ObservableOnly").diagnostics(requireInitializer: false)
        if diagnostics.contains(where: { $0.severity == .error }) { return ExpansionResult(source: nil, diagnostics: diagnostics) }
        guard let property = property(member) else { return ExpansionResult(source: nil, diagnostics: diagnostics) }
        let storage = storageName(property.name)
        // An `init` accessor only when there is no declaration default to initialize the box with inline.
        let initAccessor = property.binding.initializer != nil ? "" : """
            @storageRestrictions(accesses: \(storage))
            init(initialValue) {
                \(storage).initialize(initialValue)
            }

            """
        var observers: [String] = []
        if property.hasWillSet { observers.append("willSet: { self.\(willSetName(property.name))($0) }") }
        if property.hasDidSet { observers.append("didSet: { self.\(didSetName(property.name))($0) }") }
        let observerArguments = observers.isEmpty ? "" : ", " + observers.joined(separator: ", ")
        let text = initAccessor + """
            get {
                _od_registrar.access(self, keyPath: \(property.keyPath))
                return \(storage).value
            }
            set {
                \(storage).set(newValue, notify: ObservableDefaults::_defaultsShouldNotify(\(storage).value, newValue), keyPath: \(property.keyPath), on: self, registrar: _od_registrar\(observerArguments))
            }
            """
        return ExpansionResult(source: text, diagnostics: diagnostics)
    }

    /// The peer role of `@ObservableOnly`: the `_od_<name>` storage (a `_DefaultsBox`) and the moved `willSet`/`didSet` bodies.
    /// - Parameter decl: The property declaration's source.
    /// - Returns: The peers, or ``ExpansionResult/empty`` when there is no property, or neither a type nor an initializer.
    public static func observableOnlyPeers(decl: String) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember(), let property = property(member) else { return .empty }
        let storage = storageName(property.name)
        var lines: [String] = []
        if let type = property.type {
            let value = property.binding.initializer.map { $0.trimmed } ?? ""
            lines.append("private let \(storage) = ObservableDefaults::_DefaultsBox<\(type)>(\(value))")
        } else if let initializer = property.binding.initializer {
            lines.append("private let \(storage) = ObservableDefaults::_DefaultsBox(\(initializer.trimmed))")
        } else {
            return .empty
        }
        lines += observerMethods(property)
        return ExpansionResult(source: lines.joined(separator: "\n\n"))
    }
}
