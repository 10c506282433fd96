/// Expansions of `@ObservableDefaults` on a class: members (registrar, binding, initializer,
/// `observerStarter`), member attributes (`@DefaultsBacked` / `@ObservableOnly`) and the `Observable`
/// conformance.
public enum ClassExpansion {
    static let macroName = "ObservableDefaults"

    struct Context {
        let type: TypeDeclSyntax
        let options: ObservableDefaultsOptions
        let optionDiagnostics: [MacroDiagnostic]

        var isMainActor: Bool {
            options.defaultIsolationIsMainActor || type.attributes.contains { $0.name == "MainActor" }
        }
    }

    static func context(decl: String, attribute: String, attributeLocator: SourceLocator) -> Context? {
        var parser = DeclParser(decl)
        guard let type = parser.parseTypeDecl() else { return nil }
        var attributeParser = DeclParser(attribute)
        let attributeSyntax = attributeParser.parseAttributes().first
        let (options, diagnostics) = ObservableDefaultsOptions.read(attributeSyntax, locator: attributeLocator)
        return Context(type: type, options: options, optionDiagnostics: diagnostics)
    }

    // MARK: - member

    /// The member role: the registrar, the binding, the Apple library's configuration members (`_userDefaults`,
    /// `_prefix`, `_isExternalNotificationDisabled`, for custom initializers), the slots of the persisted
    /// properties, the initializer (with `autoInit`), `observerStarter` and `update(_:_:)`.
    /// - Parameters:
    ///   - decl: The class declaration's source.
    ///   - declLocator: Maps offsets in `decl` to file offsets (for diagnostics).
    ///   - attribute: The `@ObservableDefaults(…)` attribute's source.
    ///   - attributeLocator: Maps offsets in `attribute` to file offsets.
    /// - Returns: The generated members and the diagnostics; no source when the declaration is not a class.
    public static func members(decl: String, declLocator: SourceLocator, attribute: String, attributeLocator: SourceLocator) -> ExpansionResult {
        guard let context = context(decl: decl, attribute: attribute, attributeLocator: attributeLocator) else {
            return ExpansionResult(source: nil, diagnostics: [
                MacroDiagnostic(.error, "'@\(macroName)' can only be applied to a class", at: attributeLocator.file(attributeLocator.triviaLength)),
            ])
        }
        let type = context.type
        var diagnostics = context.optionDiagnostics
        guard type.keyword == "class" else {
            let article = type.keyword == "enum" || type.keyword == "actor" || type.keyword == "extension" ? "an" : "a"
            diagnostics.append(MacroDiagnostic(
                .error, "'@\(macroName)' can only be applied to a class, not to \(article) \(type.keyword)",
                at: declLocator.file(type.keywordStart),
                highlights: [declLocator.file(type.keywordStart)..<declLocator.file(type.keywordEnd)],
                fixIts: type.keyword == "struct" ? [.init(message: "make it a class", changes: [
                    .init(start: declLocator.file(type.keywordStart), end: declLocator.file(type.keywordEnd), newText: "final class"),
                ])] : []))
            return ExpansionResult(source: nil, diagnostics: diagnostics)
        }
        if let name = context.options.suiteName, let problem = suiteNameProblem(name) {
            var reader = DeclParser(attribute)
            let argument = reader.parseAttributes().first?.argument("suiteName")
            let start = attributeLocator.file(argument?.start ?? 0), end = attributeLocator.file(argument?.end ?? 0)
            diagnostics.append(MacroDiagnostic(.error, "invalid suite name: \(problem)", at: start, highlights: [start..<end]))
        }
        if let cloud = type.attributes.first(where: { $0.name == "ObservableCloud" }) {
            diagnostics.append(MacroDiagnostic(
                .error, "'@ObservableCloud' and '@ObservableDefaults' cannot be applied to the same class",
                at: declLocator.file(cloud.start), highlights: [declLocator.file(cloud.start)..<declLocator.file(cloud.end)]))
        }
        for member in type.members {
            for attribute in member.attributes where PropertyRole.cloudAttributes.contains(attribute.name) {
                diagnostics.append(MacroDiagnostic(
                    .error, "'@\(attribute.name)' belongs to '@ObservableCloud'; use '@\(attribute.name == "CloudKey" ? "DefaultsKey" : "DefaultsBacked")' in an '@ObservableDefaults' class",
                    at: declLocator.file(attribute.start),
                    highlights: [declLocator.file(attribute.start)..<declLocator.file(attribute.end)],
                    fixIts: [.init(message: "use '@\(attribute.name == "CloudKey" ? "DefaultsKey" : "DefaultsBacked")'", changes: [
                        .init(start: declLocator.file(attribute.start), end: declLocator.file(attribute.start) + attribute.name.utf8.count + 1,
                              newText: attribute.name == "CloudKey" ? "@DefaultsKey" : "@DefaultsBacked"),
                    ])]))
            }
        }
        for member in type.members where PropertyRole.of(member, observeFirst: context.options.observeFirst).role != .notApplicable
            && PropertyRole.of(member, observeFirst: context.options.observeFirst).role != .ignored && member.bindings.count > 1 {
            diagnostics.append(severalBindings(member, source: decl, locator: declLocator))
        }
        diagnostics += keyWarnings(type, options: context.options, locator: declLocator)
        // Argument and member errors still produce the members, so the compiler reports only the real problem.
        return ExpansionResult(source: memberText(context), diagnostics: diagnostics)
    }

    static func memberText(_ context: Context) -> String {
        let type = context.type
        let options = context.options
        let access: String
        switch type.accessLevel {
        case "open", "public": access = "public "
        case "package": access = "package "
        default: access = ""
        }
        let selfType = type.name
        let suite = options.suiteName.map(StringLiteral.quote) ?? "nil"
        let prefix = StringLiteral.quote(options.prefix ?? "")
        var text = """
            private let _od_registrar = Observation::ObservationRegistrar()

            private let _od_binding = ObservableDefaults::_DefaultsObjectBinding(suiteName: \(suite), prefix: \(prefix), ignoreExternalChanges: \(options.ignoreExternalChanges), limitToInstance: \(options.limitToInstance), mainActor: \(context.isMainActor))

            private var _userDefaults: ObservableDefaults::DefaultsSuite {
                get { _od_binding.suite }
                set { _od_binding.configure(suite: newValue, ignoreExternalChanges: nil, prefix: nil) }
            }

            private var _prefix: Swift::String {
                get { _od_binding.prefix }
                set { _od_binding.configure(suite: nil, ignoreExternalChanges: nil, prefix: newValue) }
            }

            private var _isExternalNotificationDisabled: Swift::Bool {
                get { _od_binding.ignoresExternalChanges }
                set { _od_binding.configure(suite: nil, ignoreExternalChanges: newValue, prefix: nil) }
            }

            """
        // The generated initializer needs every stored property to have an initial value (as in the Apple
        // library); without one the class must declare its own initializer.
        if options.autoInit && !type.members.contains(where: needsInitialization) {
            text += """

                \(access)init(userDefaults: ObservableDefaults::DefaultsSuite? = nil, ignoreExternalChanges: Swift::Bool? = nil, prefix: Swift::String? = nil, ignoredKeyPathsForExternalUpdates: [Swift::PartialKeyPath<\(selfType)>] = []) {
                    _od_binding.configure(suite: userDefaults, ignoreExternalChanges: ignoreExternalChanges, prefix: prefix)
                    observerStarter(observableKeysBlacklist: ignoredKeyPathsForExternalUpdates)
                }

                """
        }
        // The slots of the persisted properties: declared here rather than by `@DefaultsBacked`'s peer role,
        // because the compiler does not expand a property macro whose arguments do not type-check, and
        // `observerStarter` would then name a slot that does not exist (a second error for one mistake).
        for member in type.members {
            guard PropertyRole.of(member, observeFirst: options.observeFirst).role == .persisted,
                  PropertyRole.isExpandable(member, needsInitializer: true),
                  let slot = PropertyExpansion.slotDeclaration(member) else { continue }
            text += "\n" + wrap(slot, in: member.ifConfig, indent: "")
        }
        let register = context.isMainActor ? "mainActorProperty" : "property"
        var body = "    let _od_properties = ObservableDefaults::_DefaultsPropertyList()\n"
        for member in type.members {
            let (role, _) = PropertyRole.of(member, observeFirst: options.observeFirst)
            guard role == .persisted, PropertyRole.isExpandable(member, needsInitializer: true),
                  let property = PropertyExpansion.property(member) else { continue }
            var arguments = "\(PropertyExpansion.storageName(property.name)), keyPath: \\\(selfType).\(property.binding.nameText), on: self, registrar: _od_registrar"
            if property.observerType != nil {
                if property.hasWillSet { arguments += ", willSet: { $0.\(PropertyExpansion.willSetName(property.name))($1) }" }
                if property.hasDidSet { arguments += ", didSet: { $0.\(PropertyExpansion.didSetName(property.name))($1) }" }
            }
            let line = "_od_properties.append(_od_binding.\(register)(\(arguments)))"
            body += wrap(line, in: member.ifConfig, indent: "    ")
        }
        body += "    _od_binding.start(_od_properties, ignoring: observableKeysBlacklist.map { $0 as Swift::AnyKeyPath }, isolation: #isolation)\n"
        text += """

            \(access)func observerStarter(observableKeysBlacklist: [Swift::PartialKeyPath<\(selfType)>] = []) {
            \(body)}

            /// Atomically replaces the value of a persisted property, across processes: `transform` gets the value
            /// the suite holds (read under its cross-process lock; the default when the key is absent) and returns
            /// the new one (`nil` on an Optional removes the key). It may run more than once and must not use the
            /// suite. Observers hear the change once, as for an assignment.
            /// - Returns: the value `transform` returned.
            @discardableResult
            \(access)func update<_od_Value>(_ keyPath: Swift::ReferenceWritableKeyPath<\(selfType), _od_Value>, _ transform: (_od_Value) throws -> _od_Value) throws -> _od_Value {
                try _od_binding.update(keyPath, of: self, transform)
            }
            """
        return text
    }

    /// Warnings for keys that cannot work as written: `@DefaultsKey` on a property that is not stored, and two
    /// stored properties under one key.
    static func keyWarnings(_ type: TypeDeclSyntax, options: ObservableDefaultsOptions, locator: SourceLocator) -> [MacroDiagnostic] {
        var warnings: [MacroDiagnostic] = []
        var owners: [String: String] = [:]
        for member in type.members {
            let role = PropertyRole.of(member, observeFirst: options.observeFirst).role
            if role != .persisted, let key = member.attribute(PropertyRole.defaultsKeyName), let name = member.bindings.first?.name {
                warnings.append(MacroDiagnostic(
                    .warning, "'@DefaultsKey' has no effect: '\(name)' is not stored\(options.observeFirst ? " (in observeFirst mode, mark it '@DefaultsBacked')" : "")",
                    at: locator.file(key.start), highlights: [locator.file(key.start)..<locator.file(key.end)]))
            }
            guard role == .persisted, PropertyRole.isExpandable(member, needsInitializer: true),
                  let binding = member.bindings.first, let name = binding.name,
                  let key = PropertyRole.key(of: member, attribute: nil) else { continue }
            if let owner = owners[key], member.ifConfig.isEmpty {
                warnings.append(MacroDiagnostic(
                    .warning, "'\(name)' and '\(owner)' are both stored under the key '\(key)'",
                    at: locator.file(binding.nameStart), highlights: [locator.file(binding.nameStart)..<locator.file(binding.nameEnd)]))
            } else if member.ifConfig.isEmpty {
                owners[key] = name
            }
        }
        return warnings
    }

    /// Why a suite name cannot name a file in the suites directory (the store's rules), or `nil`.
    static func suiteNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.contains("/") { return "'\(name)' contains '/'" }
        if name.contains("\0") { return "it contains a NUL character" }
        if name == "." || name == ".." { return "'\(name)' is not a file name" }
        if name.utf8.count > 240 { return "it is longer than 240 bytes" }
        return nil
    }

    /// Several bindings in one declaration: each property needs its own accessors and key.
    static func severalBindings(_ member: MemberSyntax, source: String, locator: SourceLocator) -> MacroDiagnostic {
        let text = SourceText(source)
        var lineStart = member.start
        while lineStart > 0 && text.bytes[lineStart - 1] != UInt8(ascii: "\n") { lineStart -= 1 }
        let indentation = String(text.slice(lineStart, member.start).prefix { $0 == " " || $0 == "\t" })
        let prefix = text.slice(member.start, member.keywordEnd)
        var changes: [MacroDiagnostic.Change] = []
        for index in 1..<member.bindings.count {
            let previous = member.bindings[index - 1], binding = member.bindings[index]
            changes.append(.init(start: locator.file(previous.end), end: locator.file(binding.nameStart), newText: "\n" + indentation + prefix + " "))
        }
        let second = member.bindings[1]
        return MacroDiagnostic(
            .error, "'@\(macroName)' needs one property per declaration; '\(second.nameText)' shares its declaration with '\(member.bindings[0].nameText)'",
            at: locator.file(second.nameStart), highlights: [locator.file(second.nameStart)..<locator.file(second.nameEnd)],
            fixIts: [.init(message: "declare each property separately", changes: changes)])
    }

    /// A stored instance property without an initial value (an Optional `var` counts as initialized).
    static func needsInitialization(_ member: MemberSyntax) -> Bool {
        guard member.kind == .variable || member.kind == .constant, !member.isStatic, !member.hasModifier("lazy") else { return false }
        return member.bindings.contains { binding in
            binding.isStored && binding.initializer == nil
                && !(member.kind == .variable && binding.type.map(PropertyExpansion.isOptional) == true)
        }
    }

    /// `line` inside the `#if` clauses of a member, so it only exists when the member does.
    static func wrap(_ line: String, in clauses: [IfConfigClause], indent: String) -> String {
        guard let clause = clauses.first else { return indent + line + "\n" }
        var text = ""
        for header in clause.previousHeaders { text += header + "\n" }
        text += clause.header + "\n"
        text += wrap(line, in: Array(clauses.dropFirst()), indent: indent)
        text += "#endif\n"
        return text
    }

    // MARK: - memberAttribute

    /// The member-attribute role: `@DefaultsBacked` or `@ObservableOnly` for a stored `var` that has neither.
    /// - Parameters:
    ///   - member: The member declaration's source.
    ///   - parent: The class declaration's source.
    ///   - attribute: The `@ObservableDefaults(…)` attribute's source (for `observeFirst`).
    /// - Returns: The attribute to add, or ``ExpansionResult/empty``.
    public static func memberAttributes(member: String, parent: String, attribute: String) -> ExpansionResult {
        var parentParser = DeclParser(parent)
        guard let type = parentParser.parseTypeDecl(), type.keyword == "class" else { return .empty }
        var attributeParser = DeclParser(attribute)
        let attributeSyntax = attributeParser.parseAttributes().first
        let (options, _) = ObservableDefaultsOptions.read(attributeSyntax, locator: SourceLocator(nodeOffset: 0, triviaLength: 0))
        var parser = DeclParser(member)
        guard let syntax = parser.parseMember() else { return .empty }
        let (role, explicit) = PropertyRole.of(syntax, observeFirst: options.observeFirst)
        // Several bindings in one declaration are reported by the member role (an accessor macro cannot apply).
        guard !explicit, syntax.bindings.count == 1 else { return .empty }
        switch role {
        case .persisted: return ExpansionResult(source: "@DefaultsBacked")
        case .observableOnly: return ExpansionResult(source: "@ObservableOnly")
        case .ignored, .notApplicable: return .empty
        }
    }

    // MARK: - extension

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
