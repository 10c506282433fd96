// `@ObservableOnly`: an observable property that is not persisted.
extension PropertyExpansion {
    /// The accessor role of `@ObservableOnly`: accessors that go through the registrar and the `_od_<name>` storage.
    /// - Parameters:
    ///   - decl: The property declaration's source.
    ///   - locator: Maps offsets in `decl` to file offsets (for diagnostics).
    /// - Returns: The accessors and the diagnostics; no source when there is an error.
    public static func observableOnlyAccessors(decl: String, locator: SourceLocator) -> ExpansionResult {
        var parser = DeclParser(decl)
        guard let member = parser.parseMember() else { return ExpansionResult(source: nil) }
        let diagnostics = PropertyChecks(
            member: member, locator: locator, macroName: MacroName.observableOnly.attributeName
        ).diagnostics(requireInitializer: false)
        if diagnostics.contains(where: { $0.severity == .error }) {
            return ExpansionResult(source: nil, diagnostics: diagnostics)
        }
        guard let property = property(member) else { return ExpansionResult(source: nil, diagnostics: diagnostics) }
        let storage = storageName(property.name)
        // An `init` accessor only when there is no declaration default to initialize the box with inline.
        let initAccessor =
            property.binding.initializer != nil
            ? ""
            : """
            @storageRestrictions(accesses: \(storage))
            init(initialValue) {
                \(storage).initialize(initialValue)
            }

            """
        var observers: [String] = []
        if property.hasWillSet { observers.append("willSet: { self.\(willSetName(property.name))($0) }") }
        if property.hasDidSet { observers.append("didSet: { self.\(didSetName(property.name))($0) }") }
        let observerArguments = observers.isEmpty ? "" : ", " + observers.joined(separator: ", ")
        let text =
            initAccessor + """
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
