/// The check that a persisted property's type can be stored, with an error that names the type.
///
/// The plugin sees text only, so it cannot tell whether a type is storable; the compiler can, through the
/// overloads of `_defaultsSlot(key:_:)`. The catch-all overload (any other type) returns
/// `_DefaultsUnstorable<V>` instead of a slot, and the slot's initializer passes the factory's result through a
/// pair of overloads generated for the property's type, in a private enum of the class:
///
/// ```swift
/// private let _od_x = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "x", NotCodable()))
///
/// private enum _od_Storable {
///     nonisolated static func check0<_od_Value>(_ slot: ObservableDefaults::_DefaultsSlot<_od_Value>) -> ObservableDefaults::_DefaultsSlot<_od_Value> { slot }
///     @available(*, unavailable, message: "`NotCodable` cannot be stored in a suite: …")
///     nonisolated static func check0<_od_Value>(_ slot: ObservableDefaults::_DefaultsUnstorable<_od_Value>) -> ObservableDefaults::_DefaultsSlot<_od_Value> { Swift::fatalError() }
/// }
/// ```
///
/// For a storable type the compiler prefers the constrained factories (the most specific wins) and the
/// available overload (choosing an unavailable declaration makes a solution worse); for any other type only the
/// catch-all fits, so only the unavailable overload does: one error, with the message written here. Both
/// overloads return the slot type, so the property's accessors type-check either way and add no second error.
///
/// Properties whose message is the same (the same type, under the same `#if` clauses) share one pair, so a
/// class of many properties of a few types declares a few pairs. The pairs live in a nested enum rather than in
/// the class: looking up a new name among the class's members costs the compiler time in proportion to the
/// members that carry macro attributes, and a nested type is named without the class's name, so a generic class
/// needs nothing more. The functions are `nonisolated`, so the slot initializers of a main-actor class (or of a
/// module whose default isolation is the main actor) stay non-isolated.
enum StorableCheck {
    /// The name of the enum that holds the checks.
    static let namespace = "_od_Storable"

    /// One pair of overloads: its function name, its error message, and the `#if` clauses it is declared in.
    struct Check: Equatable {
        let name: String
        let message: String
        let ifConfig: [IfConfigClause]
    }

    /// The checks the properties need, in order of first use, and the check of each property (by index).
    static func plan(_ properties: [PropertyExpansion.Property], family: MacroFamily) -> (
        checks: [Check], checkOfProperty: [String]
    ) {
        var checks: [Check] = []
        var checkOfProperty: [String] = []
        for property in properties {
            let message = self.message(property, family: family)
            let ifConfig = property.member.ifConfig
            if let check = checks.first(where: { $0.message == message && $0.ifConfig == ifConfig }) {
                checkOfProperty.append(check.name)
            } else {
                let check = Check(name: "check\(checks.count)", message: message, ifConfig: ifConfig)
                checks.append(check)
                checkOfProperty.append(check.name)
            }
        }
        return (checks, checkOfProperty)
    }

    /// The expression that passes a slot factory's result through a check.
    static func call(_ check: String, _ slot: String) -> String { "\(namespace).\(check)(\(slot))" }

    /// `private enum _od_Storable { … }` with every check inside its `#if` clauses; `nil` without checks.
    static func namespaceDeclaration(_ checks: [Check]) -> String? {
        guard !checks.isEmpty else { return nil }
        var text = "private enum \(namespace) {\n"
        for check in checks {
            text += ClassExpansion.wrap(declarations(check), in: check.ifConfig, indent: "    ")
        }
        return text + "}"
    }

    /// The pair of overloads of `check`, for the body of the enum (the lines after the first are indented).
    static func declarations(_ check: Check) -> String {
        let generic = "<_od_Value>"
        let slot = "ObservableDefaults::_DefaultsSlot<_od_Value>"
        let unstorable = "ObservableDefaults::_DefaultsUnstorable<_od_Value>"
        return """
            nonisolated static func \(check.name)\(generic)(_ slot: \(slot)) -> \(slot) { slot }
                @available(*, unavailable, message: \(StringLiteral.quote(check.message)))
                nonisolated static func \(check.name)\(generic)(_ slot: \(unstorable)) -> \(slot) { Swift::fatalError() }
            """
    }

    /// The error for a property whose type cannot be stored: the type as written (the wrapped type of an
    /// Optional), or the property when the type cannot be told from the declaration.
    static func message(_ property: PropertyExpansion.Property, family: MacroFamily) -> String {
        let subject = typeName(property).map { "`\($0)`" } ?? "the type of '\(property.name)'"
        return "\(subject) cannot be stored in \(family.storeDescription): make it Codable, RawRepresentable "
            + "(with a property-list raw value) or a property-list type, or mark the property @ObservableOnly or "
            + "@Ignore"
    }

    /// The property's type as written in its annotation (an Optional's wrapped type), or else as its
    /// initializer shows it beyond doubt; `nil` when neither tells.
    static func typeName(_ property: PropertyExpansion.Property) -> String? {
        if let type = property.type {
            let text = normalized(type)
            return text.isEmpty ? nil : wrappedType(text)
        }
        return property.binding.initializer.flatMap(initializerType)
    }

    /// `T?`, `T!`, `Optional<T>` → `T`; any other type unchanged.
    static func wrappedType(_ type: String) -> String {
        if type.hasSuffix("?") || type.hasSuffix("!") { return String(type.dropLast()) }
        for prefix in ["Optional<", "Swift.Optional<", "Swift::Optional<"] where type.hasPrefix(prefix) {
            if type.hasSuffix(">") { return String(type.dropFirst(prefix.count).dropLast()) }
        }
        return type
    }

    /// The type an initializer creates: a literal's (`1`, `-2.5`, `"s"`, `true`), or, by the convention that
    /// type names start with an uppercase letter, `Type(…)`, `Type.init(…)` or `Type.member` (a static member,
    /// as `.standard` or `.default`), where `Type` may be qualified (`Module.Type`) or specialized (`Type<Int>`).
    /// Anything else (a collection literal, a function call, a chain, `Self`) tells nothing.
    static func initializerType(_ initializer: String) -> String? {
        let tokens = Lexer.tokenize(initializer)
        guard let end = LiteralType.typeNameEnd(tokens) else {
            return LiteralType.infer(initializer).map { $0.hasPrefix("Swift::") ? String($0.dropFirst(7)) : $0 }
        }
        let type = join(tokens[..<end])
        if LiteralType.isCall(tokens, from: end) { return type }
        guard end + 1 < tokens.count, tokens[end].isOperator("."), tokens[end + 1].kind == .identifier else {
            return nil
        }
        let member = tokens[end + 1]
        if member.text == "init" { return LiteralType.isCall(tokens, from: end + 2) ? type : nil }
        return member.identifierName.first?.isLowercase == true && end + 2 == tokens.count ? type : nil
    }

    /// `text`'s tokens, one space where the source has whitespace or a comment between two of them.
    static func normalized(_ text: String) -> String { join(Lexer.tokenize(text)[...]) }

    static func join(_ tokens: ArraySlice<Token>) -> String {
        var result = ""
        var previousEnd: Int?
        for token in tokens {
            if let previousEnd, token.start > previousEnd { result += " " }
            result += token.text
            previousEnd = token.end
        }
        return result
    }
}
