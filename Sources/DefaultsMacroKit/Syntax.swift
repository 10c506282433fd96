/// The source a parser works on: the text and its UTF-8 bytes, for slicing by token offsets.
public struct SourceText: Sendable {
    public let text: String
    public let bytes: [UInt8]

    public init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    /// The text between two UTF-8 offsets.
    public func slice(_ start: Int, _ end: Int) -> String {
        let lower = max(0, min(start, bytes.count)), upper = max(lower, min(end, bytes.count))
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }
}

/// An argument of an attribute: `label: value`.
public struct ArgumentSyntax: Sendable, Equatable {
    public var label: String?
    /// The value's tokens.
    public var value: [Token]
    /// The value's text.
    public var valueText: String
    public var start: Int
    public var end: Int
}

/// An attribute such as `@DefaultsKey(userDefaultsKey: "k")`.
public struct AttributeSyntax: Sendable, Equatable {
    /// The name without `@` (and without a module qualifier: `@ObservableDefaults.Ignore` is `Ignore`).
    public var name: String
    /// The arguments, or `nil` when the attribute has no parentheses.
    public var arguments: [ArgumentSyntax]?
    public var start: Int
    public var end: Int

    public func argument(_ label: String) -> ArgumentSyntax? {
        arguments?.first { $0.label == label }
    }
}

/// A modifier such as `public`, `static`, `private(set)`.
public struct ModifierSyntax: Sendable, Equatable {
    public var name: String
    /// `set` in `private(set)`.
    public var detail: String?
    public var start: Int
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
    public var start: Int
    public var end: Int
}

/// One binding of a property declaration: `name: Type = initializer { accessors }`.
public struct BindingSyntax: Sendable, Equatable {
    /// The declared name without backticks; `nil` for a tuple pattern.
    public var name: String?
    /// The name as written (with backticks, if any).
    public var nameText: String
    public var nameStart: Int
    public var nameEnd: Int
    public var type: String?
    public var typeEnd: Int?
    public var initializer: String?
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
    public enum Kind: Sendable, Equatable {
        case variable
        case constant
        case other(String)
    }

    public var kind: Kind
    public var attributes: [AttributeSyntax]
    public var modifiers: [ModifierSyntax]
    /// Where the `var`/`let` keyword (or the declaration's keyword) starts.
    public var keywordStart: Int
    public var keywordEnd: Int
    public var bindings: [BindingSyntax]
    /// The `#if` clauses this member is inside, outermost first.
    public var ifConfig: [IfConfigClause]
    /// Where the declaration starts (its first attribute or modifier) and ends.
    public var start: Int
    public var end: Int

    public func attribute(_ name: String) -> AttributeSyntax? { attributes.first { $0.name == name } }
    public func hasAttribute(_ name: String) -> Bool { attribute(name) != nil }
    public func hasModifier(_ name: String) -> Bool { modifiers.contains { $0.name == name } }
    public var isStatic: Bool { hasModifier("static") || hasModifier("class") }
}

/// A type declaration: `class`, `struct`, `enum`, `actor`, `protocol` or `extension`.
public struct TypeDeclSyntax: Sendable, Equatable {
    public var attributes: [AttributeSyntax]
    public var modifiers: [ModifierSyntax]
    /// `class`, `struct`, `enum`, `actor`, `protocol`, `extension`, or whatever keyword was found.
    public var keyword: String
    public var keywordStart: Int
    public var keywordEnd: Int
    public var name: String
    /// `<T: Codable>` as written, or `nil`.
    public var genericParameters: String?
    /// The inherited types as written.
    public var inheritance: [String]
    public var members: [MemberSyntax]

    /// `public`, `package`, `open`, `fileprivate`, `private` or `nil` (internal).
    public var accessLevel: String? {
        for name in ["open", "public", "package", "internal", "fileprivate", "private"] where modifiers.contains(where: { $0.name == name && $0.detail == nil }) {
            return name
        }
        return nil
    }
}
