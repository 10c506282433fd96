/// How a member of an `@ObservableDefaults` class is treated.
public enum PropertyRole: Equatable, Sendable {
    /// Stored in the suite and observable (`@DefaultsBacked`, explicit or implied).
    case persisted
    /// Observable only (`@ObservableOnly`, explicit or implied by `observeFirst`).
    case observableOnly
    /// Left alone (`@Ignore`, `@ObservationIgnored`).
    case ignored
    /// Not a stored instance variable (a `let`, static, lazy or computed member, a function, a type…).
    case notApplicable

    /// The attribute names the macros recognise on members.
    static let defaultsBackedName = "DefaultsBacked"
    static let observableOnlyName = "ObservableOnly"
    static let ignoreName = "Ignore"
    static let defaultsKeyName = "DefaultsKey"
    static let cloudAttributes: Set<String> = ["CloudKey", "CloudBacked"]

    /// The role of `member`; `explicit` says whether an attribute the user wrote decided it.
    public static func of(_ member: MemberSyntax, observeFirst: Bool) -> (role: PropertyRole, explicit: Bool) {
        if member.hasAttribute(ignoreName) || member.hasAttribute("ObservationIgnored") { return (.ignored, true) }
        if member.hasAttribute(observableOnlyName) { return (.observableOnly, true) }
        if member.hasAttribute(defaultsBackedName) { return (.persisted, true) }
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
        guard member.kind == .variable, !member.isStatic, member.bindings.count == 1, let binding = member.bindings.first,
              binding.name != nil, binding.isStored else { return false }
        return !needsInitializer || binding.initializer != nil || binding.type.map(PropertyExpansion.isOptional) == true
    }

    /// The key a persisted property is stored under (before the prefix), when it is known at compile time:
    /// a string literal, or the property's name. `nil` for a key given as an expression.
    static func key(of member: MemberSyntax, attribute: AttributeSyntax?) -> String? {
        switch keySource(of: member, attribute: attribute) {
        case .literal(let key): return key
        case .expression: return nil
        }
    }

    /// How the key of a persisted property is written (before the prefix).
    enum KeySource: Equatable {
        /// Known at compile time: a plain string literal, or the property's name.
        case literal(String)
        /// Any other expression (a constant, an interpolation, a call), evaluated once per object; it may be
        /// `String?` in `@DefaultsBacked`, where `nil` means the property's name.
        case expression(String)
    }

    /// The key written in `attribute` (the macro's own), `@DefaultsBacked` or `@DefaultsKey`, in that order;
    /// else the property's name. A `nil` literal counts as no key.
    static func keySource(of member: MemberSyntax, attribute: AttributeSyntax?) -> KeySource {
        let name = member.bindings.first?.name ?? ""
        for candidate in [attribute, member.attribute(defaultsBackedName), member.attribute(defaultsKeyName)] {
            guard let argument = candidate?.argument("userDefaultsKey"),
                  !(argument.value.count == 1 && argument.value[0].isIdentifier("nil")) else { continue }
            if argument.value.count == 1, let value = StringLiteral.value(of: argument.value[0].text) { return .literal(value) }
            return .expression(argument.valueText.trimmed)
        }
        return .literal(name)
    }
}

/// Infers the type of a simple literal initializer (for properties without a type annotation whose
/// observers need a typed helper).
enum LiteralType {
    /// `Type(…)`, `Module.Type(…)` or `Type<Args>(…)` as the whole initializer: the type, by the convention that
    /// type names start with an uppercase letter.
    static func initializerCallType(_ tokens: [Token], source: String) -> String? {
        guard let first = tokens.first, first.kind == .identifier, first.identifierName.first?.isUppercase == true else { return nil }
        var index = 1
        while index + 1 < tokens.count, tokens[index].isOperator("."), tokens[index + 1].kind == .identifier,
              tokens[index + 1].identifierName.first?.isUppercase == true {
            index += 2
        }
        if index < tokens.count, tokens[index].kind == .operator, tokens[index].text.hasPrefix("<") {
            var depth = 0
            repeat {
                depth += DeclParser.angleDelta(tokens[index])
                index += 1
            } while index < tokens.count && depth > 0
            guard depth == 0 else { return nil }
        }
        guard index < tokens.count, tokens[index].isPunctuation("(") else { return nil }
        let typeEnd = tokens[index - 1].end
        var depth = 0
        while index < tokens.count {
            depth += DeclParser.bracketDelta(tokens[index])
            index += 1
            if depth == 0 { break }
        }
        guard depth == 0, index == tokens.count else { return nil }
        return SourceText(source).slice(first.start, typeEnd)
    }

    static func infer(_ initializer: String?) -> String? {
        guard let initializer else { return nil }
        let tokens = Lexer.tokenize(initializer)
        if let type = initializerCallType(tokens, source: initializer) { return type }
        var body = tokens[...]
        if body.first?.isOperator("-") == true { body = body.dropFirst() }
        guard body.count == 1, let token = body.first else { return nil }
        switch token.kind {
        case .string: return "Swift::String"
        case .number:
            let text = token.text.lowercased()
            if text.hasPrefix("0x") { return text.contains("p") || text.contains(".") ? "Swift::Double" : "Swift::Int" }
            return text.contains(".") || text.contains("e") ? "Swift::Double" : "Swift::Int"
        case .identifier where token.text == "true" || token.text == "false": return "Swift::Bool"
        default: return nil
        }
    }
}
