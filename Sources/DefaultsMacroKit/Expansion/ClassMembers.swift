// The parts of the class macro's member role that every family generates the same way.
extension ClassExpansion {
    /// The access modifier (with a trailing space) of the generated initializer and other non-private
    /// members: the class's, as far as it reaches outside the module.
    static func accessModifier(_ type: TypeDeclSyntax) -> String {
        switch type.accessLevel {
        case "open", "public": "public "
        case "package": "package "
        default: ""
        }
    }

    /// Whether the family's initializer is generated: with `autoInit`, when every stored property has an
    /// initial value (as in the Apple library); otherwise the class must declare its own initializer.
    static func generatesInit(_ context: Context) -> Bool {
        context.options.autoInit && !context.type.members.contains(where: needsInitialization)
    }

    /// The persisted properties whose expansion can be generated, in declaration order.
    static func persistedProperties(_ context: Context) -> [PropertyExpansion.Property] {
        context.type.members.compactMap { member in
            guard PropertyRole.of(member, observeFirst: context.options.observeFirst).role == .persisted,
                PropertyRole.isExpandable(member, needsInitializer: true)
            else { return nil }
            return PropertyExpansion.property(member)
        }
    }

    /// The slot declarations (`private let _od_<name> = …`), each inside its member's `#if` clauses and ending
    /// with a newline, and the enum of the checks they call (see ``StorableCheck``; `nil` without slots). They
    /// are declared by the class's member role rather than by the persisted attribute's peer role, because the
    /// compiler does not expand a property macro whose arguments do not type-check, and the registration would
    /// then name a slot that does not exist (a second error for one mistake).
    static func slotDeclarations(_ context: Context, _ properties: [PropertyExpansion.Property]) -> (
        slots: [String], checks: String?
    ) {
        let plan = StorableCheck.plan(properties, family: context.family)
        var slots: [String] = []
        for (property, check) in zip(properties, plan.checkOfProperty) {
            if let slot = PropertyExpansion.slotDeclaration(property.member, check: check, family: context.family) {
                slots.append(wrap(slot, in: property.member.ifConfig, indent: ""))
            }
        }
        return (slots, StorableCheck.namespaceDeclaration(plan.checks))
    }

    /// The lines that register each persisted property with the binding (`property` or, for a main-actor
    /// class, `mainActorProperty`), indented for a function body, each inside its member's `#if` clauses.
    static func registrationLines(_ context: Context, _ properties: [PropertyExpansion.Property]) -> String {
        let register = context.isMainActor ? "mainActorProperty" : "property"
        var lines = ""
        for property in properties {
            var arguments =
                "\(PropertyExpansion.storageName(property.name)), keyPath: \\\(context.type.name).\(property.binding.nameText), on: self, registrar: _od_registrar"
            if property.observerType != nil {
                if property.hasWillSet {
                    arguments += ", willSet: { $0.\(PropertyExpansion.willSetName(property.name))($1) }"
                }
                if property.hasDidSet {
                    arguments += ", didSet: { $0.\(PropertyExpansion.didSetName(property.name))($1) }"
                }
            }
            lines += wrap(
                "_od_properties.append(_od_binding.\(register)(\(arguments)))", in: property.member.ifConfig,
                indent: "    ")
        }
        return lines
    }

    /// A stored instance property without an initial value (an Optional `var` counts as initialized).
    static func needsInitialization(_ member: MemberSyntax) -> Bool {
        guard member.kind == .variable || member.kind == .constant, !member.isStatic, !member.hasModifier("lazy") else {
            return false
        }
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
