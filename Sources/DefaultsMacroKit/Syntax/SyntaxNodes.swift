/// An argument of an attribute: `label: value`.
public struct ArgumentSyntax: Sendable, Equatable {
    /// The label, or `nil` for an unlabelled argument.
    public var label: String?
    /// The value's tokens.
    public var value: [Token]
    /// The value's text.
    public var valueText: String
    /// Where the value starts (after the label, if any).
    public var start: Int
    /// Where the value ends.
    public var end: Int
}

/// An attribute such as `@DefaultsKey(userDefaultsKey: "k")`.
public struct AttributeSyntax: Sendable, Equatable {
    /// The name without `@` (and without a module qualifier: `@ObservableDefaults.Ignore` is `Ignore`).
    public var name: String
    /// The arguments, or `nil` when the attribute has no parentheses.
    public var arguments: [ArgumentSyntax]?
    /// Where the `@` is.
    public var start: Int
    /// Where the attribute ends (after its closing parenthesis, if any).
    public var end: Int

    /// The argument labelled `label`, if present.
    public func argument(_ label: String) -> ArgumentSyntax? {
        arguments?.first { $0.label == label }
    }
}

/// A modifier such as `public`, `static`, `private(set)`.
public struct ModifierSyntax: Sendable, Equatable {
    /// The modifier's keyword.
    public var name: String
    /// `set` in `private(set)`.
    public var detail: String?
    /// Where the modifier starts.
    public var start: Int
    /// Where the modifier ends (after `(set)`, if any).
    public var end: Int
}

/// One accessor in a property's accessor block.
public struct AccessorSyntax: Sendable, Equatable {
    /// `get`, `set`, `willSet`, `didSet`, `init`, `_modify`, …
    public var kind: String
    /// The parameter name, as in `willSet(next)`.
    public var parameter: String?
    /// The text between the braces.
    public var body: String
    /// Where the accessor starts.
    public var start: Int
    /// Where the accessor ends (after its closing brace).
    public var end: Int
}

/// One binding of a property declaration: `name: Type = initializer { accessors }`.
public struct BindingSyntax: Sendable, Equatable {
    /// The declared name without backticks; `nil` for a tuple pattern.
    public var name: String?
    /// The name as written (with backticks, if any).
    public var nameText: String
    /// Where the name starts.
    public var nameStart: Int
    /// Where the name ends.
    public var nameEnd: Int
    /// The type annotation as written, or `nil`.
    public var type: String?
    /// Where the type annotation ends, if there is one.
    public var typeEnd: Int?
    /// The initializer expression (after `=`) as written, or `nil`.
    public var initializer: String?
    /// Where the initializer expression starts, if there is one.
    public var initializerStart: Int?
    /// Accessors in braces; `nil` when there is no accessor block.
    public var accessors: [AccessorSyntax]?
    /// A brace block that is a getter body (`var x: Int { 1 }`).
    public var implicitGetter: Bool
    /// Where the binding ends (after its accessor block or initializer).
    public var end: Int

    /// Stored (not computed): no accessors, or only `willSet`/`didSet`.
    public var isStored: Bool {
        if implicitGetter { return false }
        guard let accessors else { return true }
        return accessors.allSatisfy { $0.kind == "willSet" || $0.kind == "didSet" }
    }

    /// The accessor of the given kind (`get`, `willSet`, …), if present.
    public func accessor(_ kind: String) -> AccessorSyntax? { accessors?.first { $0.kind == kind } }
}

/// One `#if` clause enclosing a member: the headers of the clauses before it and its own header.
public struct IfConfigClause: Sendable, Equatable {
    /// e.g. `["#if os(Linux)", "#elseif DEBUG"]`.
    public var previousHeaders: [String]
    /// e.g. `#else`.
    public var header: String
}

/// A member of a type's body.
public struct MemberSyntax: Sendable, Equatable {
    /// What kind of declaration a member is.
    public enum Kind: Sendable, Equatable {
        /// A `var`.
        case variable
        /// A `let`.
        case constant
        /// Any other declaration, with its keyword (`func`, `init`, `case`, …).
        case other(String)
    }

    /// The declaration's kind.
    public var kind: Kind
    /// The attributes, in source order.
    public var attributes: [AttributeSyntax]
    /// The modifiers, in source order.
    public var modifiers: [ModifierSyntax]
    /// Where the `var`/`let` keyword (or the declaration's keyword) starts.
    public var keywordStart: Int
    /// Where that keyword ends.
    public var keywordEnd: Int
    /// The bindings of a `var`/`let` (`var a = 1, b = 2` has two); empty for other declarations.
    public var bindings: [BindingSyntax]
    /// The `#if` clauses this member is inside, outermost first.
    public var ifConfig: [IfConfigClause]
    /// Where the declaration starts (its first attribute or modifier) and ends.
    public var start: Int
    /// Where the declaration ends.
    public var end: Int

    /// The first attribute named `name` (without `@`), if any.
    public func attribute(_ name: String) -> AttributeSyntax? { attributes.first { $0.name == name } }
    /// Whether an attribute named `name` (without `@`) is present.
    public func hasAttribute(_ name: String) -> Bool { attribute(name) != nil }
    /// Whether a modifier named `name` is present.
    public func hasModifier(_ name: String) -> Bool { modifiers.contains { $0.name == name } }
    /// Whether the member is `static` or `class`.
    public var isStatic: Bool { hasModifier("static") || hasModifier("class") }
}

/// A type declaration: `class`, `struct`, `enum`, `actor`, `protocol` or `extension`.
public struct TypeDeclSyntax: Sendable, Equatable {
    /// The attributes, in source order.
    public var attributes: [AttributeSyntax]
    /// The modifiers, in source order.
    public var modifiers: [ModifierSyntax]
    /// `class`, `struct`, `enum`, `actor`, `protocol`, `extension`, or whatever keyword was found.
    public var keyword: String
    /// Where the keyword starts.
    public var keywordStart: Int
    /// Where the keyword ends.
    public var keywordEnd: Int
    /// The declared (or extended) type's name.
    public var name: String
    /// `<T: Codable>` as written, or `nil`.
    public var genericParameters: String?
    /// The inherited types as written.
    public var inheritance: [String]
    /// The members of the body, in source order.
    public var members: [MemberSyntax]

    /// `public`, `package`, `open`, `fileprivate`, `private` or `nil` (internal).
    public var accessLevel: String? {
        for name in ["open", "public", "package", "internal", "fileprivate", "private"]
        where modifiers.contains(where: { $0.name == name && $0.detail == nil }) {
            return name
        }
        return nil
    }
}
