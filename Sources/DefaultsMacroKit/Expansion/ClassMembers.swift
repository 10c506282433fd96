// The text of the class macro's member role.
extension ClassExpansion {
    /// The generated members of the class described by `context`.
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
            guard PropertyRole.of(member, observeFirst: options.observeFirst, family: context.family).role == .persisted,
                  PropertyRole.isExpandable(member, needsInitializer: true),
                  let slot = PropertyExpansion.slotDeclaration(member) else { continue }
            text += "\n" + wrap(slot, in: member.ifConfig, indent: "")
        }
        let register = context.isMainActor ? "mainActorProperty" : "property"
        var body = "    let _od_properties = ObservableDefaults::_DefaultsPropertyList()\n"
        for member in type.members {
            let (role, _) = PropertyRole.of(member, observeFirst: options.observeFirst, family: context.family)
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
}
