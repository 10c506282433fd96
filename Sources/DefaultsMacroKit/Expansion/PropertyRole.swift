/// How a member of a class macro's class (`@ObservableDefaults`, `@ObservableCloud`) is treated.
public enum PropertyRole: Equatable, Sendable {
    /// Stored and observable (`@DefaultsBacked` / `@CloudBacked`, explicit or implied).
    case persisted
    /// Observable only (`@ObservableOnly`, explicit or implied by `observeFirst`).
    case observableOnly
    /// Left alone (`@Ignore`, `@ObservationIgnored`).
    case ignored
    /// Not a stored instance variable (a `let`, static, lazy or computed member, a function, a type…).
    case notApplicable

    /// The role of `member`; `explicit` says whether an attribute the user wrote decided it.
    /// Any family's persisted attribute (`@DefaultsBacked`, `@CloudBacked`) marks a property as persisted:
    /// in the other family's class the class macro reports it, and the slot it gets keeps the attribute's
    /// own accessors from adding errors of their own.
    public static func of(_ member: MemberSyntax, observeFirst: Bool) -> (role: PropertyRole, explicit: Bool) {
        // Most members have no attribute; this is called several times per member of large classes.
        if !member.attributes.isEmpty {
            if member.hasAttribute(MacroName.ignore.attributeName) || member.hasAttribute("ObservationIgnored") {
                return (.ignored, true)
            }
            if member.hasAttribute(MacroName.observableOnly.attributeName) { return (.observableOnly, true) }
            if member.hasAttribute(MacroFamily.defaults.persistedAttribute)
                || member.hasAttribute(MacroFamily.cloud.persistedAttribute)
            {
                return (.persisted, true)
            }
        }
        guard member.kind == .variable, !member.isStatic, !member.hasModifier("lazy"),
            !member.hasModifier("weak"), !member.hasModifier("unowned"),
            !member.bindings.isEmpty, member.bindings.allSatisfy({ $0.isStored && $0.name != nil }),
            !member.bindings.contains(where: { $0.name?.hasPrefix("_od_") == true || $0.name?.hasPrefix("$") == true })
        else { return (.notApplicable, false) }
        return (observeFirst ? .observableOnly : .persisted, false)
    }

    /// Whether the expansion for this member can be generated (one named, stored `var` binding with an
    /// initial value); otherwise the property macro reports why.
    static func isExpandable(_ member: MemberSyntax, needsInitializer: Bool) -> Bool {
        guard member.kind == .variable, !member.isStatic, member.bindings.count == 1,
            let binding = member.bindings.first,
            binding.name != nil, binding.isStored
        else { return false }
        return !needsInitializer || binding.initializer != nil || binding.type.map(PropertyExpansion.isOptional) == true
    }
}
