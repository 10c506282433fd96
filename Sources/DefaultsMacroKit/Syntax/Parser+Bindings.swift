/// Property bindings: name, type, initializer and accessor block.
extension DeclParser {
    // MARK: - Bindings

    mutating func parseBindings() -> [BindingSyntax] {
        var bindings: [BindingSyntax] = []
        while let token = current {
            var binding = BindingSyntax(
                name: nil, nameText: token.text, nameStart: token.start, nameEnd: token.end, type: nil, typeEnd: nil,
                initializer: nil, initializerStart: nil, accessors: nil, implicitGetter: false, end: token.end)
            if token.kind == .identifier {
                binding.name = token.identifierName
                index += 1
            } else if token.isPunctuation("(") {
                skipBalanced()
                binding.nameText = source.slice(token.start, previousEnd)
                binding.nameEnd = previousEnd
            } else {
                break
            }
            if let colon = current, colon.isPunctuation(":") {
                index += 1
                let start = current?.start ?? colon.end
                var depth = 0
                while let t = current {
                    if depth == 0
                        && (t.isPunctuation(",") || t.isPunctuation("{") || t.isPunctuation("}") || t.isPunctuation(";")
                            || (t.kind == .operator && t.text.hasPrefix("=") && t.text != "==")
                            || (t.atLineStart && isDeclarationStart(t)))
                    {
                        break
                    }
                    depth += Self.angleDelta(t) + Self.bracketDelta(t)
                    if depth < 0 { break }
                    index += 1
                }
                binding.type = source.slice(start, previousEnd)
                binding.typeEnd = previousEnd
            }
            if let equal = current, equal.kind == .operator, equal.text.hasPrefix("="), equal.text != "==" {
                index += 1
                let start = equal.text == "=" ? (current?.start ?? equal.end) : equal.start + 1
                var depth = 0
                while let t = current {
                    if depth == 0 {
                        if t.isPunctuation(",") || t.isPunctuation(";") || t.isPunctuation("}") { break }
                        if t.atLineStart && isDeclarationStart(t) { break }
                        if t.isPunctuation("{") && isObserverBlock(at: index) { break }
                    }
                    depth += Self.bracketDelta(t)
                    if depth < 0 { break }
                    index += 1
                }
                binding.initializer = source.slice(start, previousEnd)
                binding.initializerStart = start
            }
            if let brace = current, brace.isPunctuation("{") {
                if binding.initializer == nil && !isAccessorBlock(at: index) {
                    binding.implicitGetter = true
                    skipBalanced()
                } else {
                    binding.accessors = parseAccessorBlock()
                }
            }
            binding.end = previousEnd
            bindings.append(binding)
            if let comma = current, comma.isPunctuation(",") {
                index += 1
                continue
            }
            break
        }
        return bindings
    }

    func isObserverBlock(at position: Int) -> Bool {
        var i = position + 1
        while i < tokens.count, tokens[i].kind == .attribute { i += 1 }
        guard i < tokens.count else { return false }
        return tokens[i].isIdentifier("willSet") || tokens[i].isIdentifier("didSet")
    }

    func isAccessorBlock(at position: Int) -> Bool {
        let i = position + 1
        guard i < tokens.count else { return false }
        let token = tokens[i]
        if token.kind == .attribute { return true }
        guard token.kind == .identifier, Self.accessorNames.contains(token.text) else { return false }
        // `get` followed by `{`, `(`, an effect, or the closing brace is an accessor; otherwise an expression.
        guard i + 1 < tokens.count else { return true }
        let next = tokens[i + 1]
        return next.isPunctuation("{") || next.isPunctuation("(") || next.isPunctuation("}")
            || next.isIdentifier("throws") || next.isIdentifier("async") || Self.accessorNames.contains(next.text)
    }

    mutating func parseAccessorBlock() -> [AccessorSyntax] {
        index += 1  // `{`
        var accessors: [AccessorSyntax] = []
        while let token = current, !token.isPunctuation("}") {
            let start = token.start
            _ = parseAttributes()
            var kind = ""
            while let t = current, t.kind == .identifier,
                t.text == "mutating" || t.text == "nonmutating" || t.text == "borrowing" || t.text == "consuming"
            {
                index += 1
            }
            if let t = current, t.kind == .identifier { kind = t.text; index += 1 }
            var parameter: String?
            if let open = current, open.isPunctuation("(") {
                if let name = peek(1), name.kind == .identifier, let close = peek(2), close.isPunctuation(")") {
                    parameter = name.identifierName
                }
                skipBalanced()
            }
            while let t = current, !t.isPunctuation("{") && !t.isPunctuation("}") { index += 1 }
            var body = ""
            if let open = current, open.isPunctuation("{") {
                skipBalanced()
                body = source.slice(open.end, previousEnd - 1)
            }
            if kind.isEmpty { continue }
            accessors.append(
                AccessorSyntax(kind: kind, parameter: parameter, body: body, start: start, end: previousEnd))
        }
        if current != nil { index += 1 }
        return accessors
    }
}
