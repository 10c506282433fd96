// `@DefaultsBacked` and `@CloudBacked` (the same expansion): a persisted property.
extension PropertyExpansion {
    /// The accessor role of `@DefaultsBacked`: the getter and setter that go through the property's slot.
    ///
    /// No `init` accessor: the slot is initialized inline with the declaration default, so the property is
    /// a computed one (the compiler keeps the declaration's initializer out of the object's initializers).
    /// - Parameters:
    ///   - decl: The property declaration's source.
    ///   - locator: Maps offsets in `decl` to file offsets (for diagnostics).
    ///   - attributeName: The attribute's name as used, for the messages.
    ///   - attribute: The attribute's source (`@DefaultsBacked(userDefaultsKey: "k")`): its key argument must be
    ///     a plain string literal or `nil`.
    ///   - attributeLocator: Maps offsets in `attribute` to file offsets.
    ///   - family: The family of the attribute (its key label).
    /// - Returns: The accessors and the diagnostics; no source when there is an error.
    public static func defaultsBackedAccessors(
        decl: String, locator: SourceLocator, attributeName: String = MacroName.defaultsBacked.attributeName,
        attribute: String = "", attributeLocator: SourceLocator? = nil, family: MacroFamily = .defaults
    ) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember() else { return ExpansionResult(source: nil) }
        var diagnostics = PropertyChecks(member: member, locator: locator, macroName: attributeName).diagnostics(
            requireInitializer: true)
        if let problem = keyProblem(attribute: attribute, locator: attributeLocator ?? locator, family: family) {
            diagnostics.append(problem)
        }
        if diagnostics.contains(where: { $0.severity == .error }) {
            return ExpansionResult(source: nil, diagnostics: diagnostics)
        }
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

    /// The peer role of the key attributes (`@DefaultsKey`, `@CloudKey`), which generate nothing: the error
    /// for a key argument that is not a plain string literal (the class macro reads the key and skips a bad
    /// one, so this is the one report of it).
    /// - Parameters:
    ///   - attribute: The attribute's source (`@DefaultsKey(userDefaultsKey: "k")`).
    ///   - locator: Maps offsets in `attribute` to file offsets.
    ///   - family: The family of the attribute (its key label).
    /// - Returns: ``ExpansionResult/empty``, or no source and the error.
    public static func keyAttributePeers(attribute: String, locator: SourceLocator, family: MacroFamily = .defaults)
        -> ExpansionResult
    {
        guard let problem = keyProblem(attribute: attribute, locator: locator, family: family) else { return .empty }
        return ExpansionResult(source: nil, diagnostics: [problem])
    }

    /// The error for the key argument of the attribute written in `attribute`, if it is not a plain string literal.
    static func keyProblem(attribute: String, locator: SourceLocator, family: MacroFamily) -> MacroDiagnostic? {
        var parser = DeclParser(attribute)
        return PropertyKey.stringLiteralProblem(parser.parseAttributes().first, family: family, locator: locator)
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

    /// The slot (`_od_<name>`) of a persisted property: its key, declaration default and storage rule, passed
    /// through a ``StorableCheck`` so that a type that cannot be stored is one error naming it; `nil` when the
    /// property cannot be persisted.
    /// - Parameters:
    ///   - member: The property declaration.
    ///   - check: The name of the property's check in the class's ``StorableCheck/namespace``.
    ///   - family: The class macro's family (the key attribute it reads).
    static func slotDeclaration(_ member: MemberSyntax, check: String, family: MacroFamily = .defaults) -> String? {
        guard let property = property(member),
            let initializer = property.binding.initializer ?? (property.type.map(isOptional) == true ? "nil" : nil)
        else { return nil }
        let key = StringLiteral.quote(PropertyKey.literal(of: member, family: family))
        let storage = storageName(property.name)
        let value = initializer.trimmed
        if let type = property.type {
            let factory = isOptional(type) ? "_defaultsOptionalSlot" : "_defaultsSlot"
            let slot = StorableCheck.call(check, "ObservableDefaults::\(factory)(key: \(key), \(value))")
            return "private let \(storage): ObservableDefaults::_DefaultsSlot<\(type)> = \(slot)"
        }
        let slot = StorableCheck.call(check, "ObservableDefaults::_defaultsSlot(key: \(key), \(value))")
        return "private let \(storage) = \(slot)"
    }
}
