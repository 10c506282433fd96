/// The key a persisted property is stored under (before the object's prefix).
///
/// A key must be a plain string literal (or `nil`, the property's name), as in the Apple library: the plugin
/// only sees source text, and a key the macro cannot read would be a key it silently does not use. Each
/// attribute reports its own argument (``stringLiteralProblem(_:family:locator:)``, from its own expansion,
/// so a mistake is reported once); the class macro, which also reads the keys, only skips a bad one.
enum PropertyKey {
    /// The key: the string literal written in the family's persisted attribute (`@DefaultsBacked`) or its key
    /// attribute (`@DefaultsKey`), in that order, under the family's label
    /// (`userDefaultsKey:`); else the property's name. A `nil` literal counts as no key; an argument that is
    /// not a plain string literal (an error its attribute reports) counts as no key too, so the generated code
    /// names no expression of the user's and adds no second error.
    static func literal(of member: MemberSyntax, family: MacroFamily = .defaults) -> String {
        for candidate in [member.attribute(family.persistedAttribute), member.attribute(family.keyAttribute)] {
            guard let argument = candidate?.argument(family.keyLabel), !argument.isNilLiteral,
                let key = argument.stringLiteralValue
            else { continue }
            return key
        }
        return member.bindings.first?.name ?? ""
    }

    /// Whether `member`'s key is as written: no key argument of the family's attributes is an expression
    /// the macro cannot read.
    static func isReadable(_ member: MemberSyntax, family: MacroFamily = .defaults) -> Bool {
        [member.attribute(family.persistedAttribute), member.attribute(family.keyAttribute)].allSatisfy { attribute in
            guard let argument = attribute?.argument(family.keyLabel) else { return true }
            return argument.isNilLiteral || argument.stringLiteralValue != nil
        }
    }

    /// The error for the key argument of `attribute` (`@DefaultsBacked`, `@DefaultsKey`, `@CloudBacked`,
    /// `@CloudKey`: the family's label) when it is neither a plain string literal nor `nil`:
    /// `'userDefaultsKey' must be a string literal: the key is fixed at compile time`, at the argument.
    static func stringLiteralProblem(_ attribute: AttributeSyntax?, family: MacroFamily, locator: SourceLocator)
        -> MacroDiagnostic?
    {
        guard let argument = attribute?.argument(family.keyLabel), !argument.isNilLiteral,
            argument.stringLiteralValue == nil
        else { return nil }
        return argument.stringLiteralRequired(subject: "key", locator: locator)
    }
}
