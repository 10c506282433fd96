/// The key a persisted property is stored under (before the object's prefix).
enum PropertyKey {
    /// The key, when it is known at compile time:
    /// a string literal, or the property's name. `nil` for a key given as an expression.
    static func literal(of member: MemberSyntax, attribute: AttributeSyntax?, family: MacroFamily = .defaults) -> String? {
        switch source(of: member, attribute: attribute, family: family) {
        case .literal(let key): return key
        case .expression: return nil
        }
    }

    /// How the key of a persisted property is written (before the prefix).
    enum Source: Equatable {
        /// Known at compile time: a plain string literal, or the property's name.
        case literal(String)
        /// Any other expression (a constant, an interpolation, a call), evaluated once per object; it may be
        /// `String?` in the persisted attribute, where `nil` means the property's name.
        case expression(String)
    }

    /// The key written in `attribute` (the macro's own), the family's persisted attribute (`@DefaultsBacked`)
    /// or its key attribute (`@DefaultsKey`), in that order, under the family's label (`userDefaultsKey:`);
    /// else the property's name. A `nil` literal counts as no key.
    static func source(of member: MemberSyntax, attribute: AttributeSyntax?, family: MacroFamily = .defaults) -> Source {
        let name = member.bindings.first?.name ?? ""
        for candidate in [attribute, member.attribute(family.persistedAttribute), member.attribute(family.keyAttribute)] {
            guard let argument = candidate?.argument(family.keyLabel),
                  !(argument.value.count == 1 && argument.value[0].isIdentifier("nil")) else { continue }
            if argument.value.count == 1, let value = StringLiteral.value(of: argument.value[0].text) { return .literal(value) }
            return .expression(argument.valueText.trimmed)
        }
        return .literal(name)
    }
}
