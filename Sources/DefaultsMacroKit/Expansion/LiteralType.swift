/// Infers the type of a simple literal initializer (for properties without a type annotation whose
/// observers need a typed helper).
enum LiteralType {
    /// `Type(…)`, `Module.Type(…)` or `Type<Args>(…)` as the whole initializer: the type, by the convention that
    /// type names start with an uppercase letter.
    static func initializerCallType(_ tokens: [Token], source: String) -> String? {
        guard let end = typeNameEnd(tokens), isCall(tokens, from: end) else { return nil }
        return SourceText(source).slice(tokens[0].start, tokens[end - 1].end)
    }

    /// The index just past a leading type name (`Type`, `Module.Type`, `Type<Args>`: identifiers starting with
    /// an uppercase letter, `Self` excepted), or `nil` when the tokens do not start with one.
    static func typeNameEnd(_ tokens: [Token]) -> Int? {
        guard let first = tokens.first, first.kind == .identifier, first.text != "Self",
            first.identifierName.first?.isUppercase == true
        else { return nil }
        var index = 1
        while index + 1 < tokens.count, tokens[index].isOperator("."), tokens[index + 1].kind == .identifier,
            tokens[index + 1].identifierName.first?.isUppercase == true
        {
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
        return index
    }

    /// Whether the tokens from `index` on are one parenthesized argument list and nothing else.
    static func isCall(_ tokens: [Token], from index: Int) -> Bool {
        guard index < tokens.count, tokens[index].isPunctuation("(") else { return false }
        var index = index
        var depth = 0
        while index < tokens.count {
            depth += DeclParser.bracketDelta(tokens[index])
            index += 1
            if depth == 0 { break }
        }
        return depth == 0 && index == tokens.count
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
