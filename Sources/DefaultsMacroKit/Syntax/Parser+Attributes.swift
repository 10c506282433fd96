/// Attributes (with their arguments) and modifiers.
extension DeclParser {
    // MARK: - Attributes and modifiers

    mutating func parseAttributes() -> [AttributeSyntax] {
        var attributes: [AttributeSyntax] = []
        while let token = current, token.kind == .attribute {
            index += 1
            var name = String(token.text.dropFirst())
            // `@Module.Name`
            while let dot = current, dot.isOperator("."), dot.start == previousEnd, let next = peek(1),
                next.kind == .identifier
            {
                name = next.identifierName
                index += 2
            }
            if name.hasPrefix("`") { name = String(name.dropFirst().dropLast()) }
            var arguments: [ArgumentSyntax]?
            if let open = current, open.isPunctuation("("), open.start == previousEnd {
                arguments = parseArguments()
            }
            attributes.append(AttributeSyntax(name: name, arguments: arguments, start: token.start, end: previousEnd))
        }
        return attributes
    }

    /// Parses `( label: value, … )` starting at `(`.
    mutating func parseArguments() -> [ArgumentSyntax] {
        index += 1
        var arguments: [ArgumentSyntax] = []
        while let token = current, !token.isPunctuation(")") {
            var label: String?
            if token.kind == .identifier, let colon = peek(1), colon.isPunctuation(":") {
                label = token.identifierName
                index += 2
            }
            let start = current?.start ?? token.end
            var value: [Token] = []
            var depth = 0
            while let t = current {
                if depth == 0 && (t.isPunctuation(",") || t.isPunctuation(")")) { break }
                depth += Self.bracketDelta(t)
                value.append(t)
                index += 1
            }
            arguments.append(
                ArgumentSyntax(
                    label: label, value: value, valueText: source.slice(start, previousEnd), start: start,
                    end: previousEnd))
            if let comma = current, comma.isPunctuation(",") { index += 1 }
        }
        if current != nil { index += 1 }
        return arguments
    }

    mutating func parseModifiers(allowClass: Bool) -> [ModifierSyntax] {
        var modifiers: [ModifierSyntax] = []
        while let token = current, token.kind == .identifier, Self.modifierNames.contains(token.text) {
            if token.text == "class" {
                // `class` is a modifier only in members, and only before another declaration keyword or modifier.
                guard allowClass, let next = peek(1), next.kind == .identifier, next.text != "class",
                    ["var", "let", "func", "subscript", "init", "typealias"].contains(next.text)
                        || Self.modifierNames.contains(next.text)
                else { break }
            }
            index += 1
            var detail: String?
            if let open = current, open.isPunctuation("("), let word = peek(1), word.kind == .identifier,
                let close = peek(2), close.isPunctuation(")")
            {
                detail = word.text
                index += 3
            }
            modifiers.append(ModifierSyntax(name: token.text, detail: detail, start: token.start, end: previousEnd))
        }
        return modifiers
    }
}
