/// Infers the type of a simple literal initializer (for properties without a type annotation whose
/// observers need a typed helper).
enum LiteralType {
    /// `Type(…)`, `Module.Type(…)` or `Type<Args>(…)` as the whole initializer: the type, by the convention that
    /// type names start with an uppercase letter.
    static func initializerCallType(_ tokens: [Token], source: String) -> String? {
        guard let first = tokens.first, first.kind == .identifier, first.identifierName.first?.isUppercase == true
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
