/// A declaration parser for what the macros need: type declarations with their member lists, and
/// property declarations with attributes, modifiers, bindings, types, initializers and accessors.
/// It never fails: malformed input yields a best-effort structure.
public struct DeclParser {
    public let source: SourceText
    let tokens: [Token]
    var index = 0

    static let modifierNames: Set<String> = [
        "public", "private", "fileprivate", "internal", "package", "open", "static", "class", "final", "lazy",
        "override", "weak", "unowned", "nonisolated", "dynamic", "mutating", "nonmutating", "convenience",
        "required", "optional", "indirect", "isolated", "consuming", "borrowing", "distributed", "prefix",
        "postfix", "infix", "unsafe",
    ]
    static let declarationKeywords: Set<String> = [
        "var", "let", "func", "init", "deinit", "subscript", "typealias", "associatedtype", "struct", "class",
        "enum", "actor", "protocol", "extension", "case", "import", "operator", "precedencegroup", "macro",
    ]
    static let accessorNames: Set<String> = [
        "get", "set", "willSet", "didSet", "init", "_modify", "_read", "modify", "read", "yielding",
        "unsafeAddress", "unsafeMutableAddress", "mutating", "nonmutating", "borrowing", "consuming",
    ]

    public init(_ text: String) {
        self.source = SourceText(text)
        self.tokens = Lexer.tokenize(text)
    }

    /// The offset of the first token (the length of the leading trivia).
    public var firstTokenOffset: Int { tokens.first?.start ?? 0 }

    // MARK: - Entry points

    /// Parses a type declaration (the text a member, member-attribute or extension role receives).
    public mutating func parseTypeDecl() -> TypeDeclSyntax? {
        index = 0
        let attributes = parseAttributes()
        let modifiers = parseModifiers(allowClass: false)
        guard let keywordToken = current, keywordToken.kind == .identifier else { return nil }
        index += 1
        var name = ""
        if let token = current, token.kind == .identifier {
            name = token.identifierName
            index += 1
            // Qualified extension names: `extension A.B`.
            while let dot = current, dot.isOperator("."), let next = peek(1), next.kind == .identifier {
                name += "." + next.identifierName
                index += 2
            }
        }
        var generics: String?
        if let open = current, open.kind == .operator, open.text.hasPrefix("<") {
            let start = open.start
            skipAngleBrackets()
            generics = source.slice(start, previousEnd)
        }
        var inheritance: [String] = []
        if let colon = current, colon.isPunctuation(":") {
            index += 1
            var itemStart = current?.start ?? 0
            var depth = 0
            while let token = current {
                if depth == 0 && (token.isPunctuation("{") || token.isIdentifier("where")) { break }
                if token.isPunctuation(",") && depth == 0 {
                    inheritance.append(source.slice(itemStart, previousEnd).trimmed)
                    index += 1
                    itemStart = current?.start ?? 0
                    continue
                }
                depth += Self.angleDelta(token) + Self.bracketDelta(token)
                index += 1
            }
            let last = source.slice(itemStart, previousEnd).trimmed
            if !last.isEmpty { inheritance.append(last) }
        }
        while let token = current, !token.isPunctuation("{") { index += 1 }
        var members: [MemberSyntax] = []
        if current != nil {
            index += 1
            members = parseMembers()
        }
        return TypeDeclSyntax(
            attributes: attributes, modifiers: modifiers, keyword: keywordToken.text,
            keywordStart: keywordToken.start, keywordEnd: keywordToken.end, name: name,
            genericParameters: generics, inheritance: inheritance, members: members)
    }

    /// Parses a single member declaration (the text a peer, accessor or member-attribute role receives).
    public mutating func parseMember() -> MemberSyntax? {
        index = 0
        var clauses: [IfConfigClause] = []
        return parseDeclaration(ifConfig: &clauses)
    }

    // MARK: - Members

    private mutating func parseMembers() -> [MemberSyntax] {
        var members: [MemberSyntax] = []
        var clauses: [IfConfigClause] = []
        while let token = current {
            if token.isPunctuation("}") { index += 1; break }
            if token.isPunctuation(";") { index += 1; continue }
            if token.kind == .pound {
                parseDirective(&clauses)
                continue
            }
            let before = index
            if let member = parseDeclaration(ifConfig: &clauses) { members.append(member) }
            if index == before { index += 1 }
        }
        return members
    }

    private mutating func parseDirective(_ clauses: inout [IfConfigClause]) {
        guard let token = current else { return }
        let header = directiveHeader()
        switch token.text {
        case "#if":
            clauses.append(IfConfigClause(previousHeaders: [], header: header))
        case "#elseif", "#else":
            if var last = clauses.popLast() {
                last.previousHeaders.append(last.header)
                last.header = header
                clauses.append(last)
            }
        case "#endif":
            _ = clauses.popLast()
        default:
            // `#warning("…")`, `#sourceLocation(…)` and freestanding macros: skip with their arguments.
            if let open = current, open.isPunctuation("(") { skipBalanced() }
        }
    }

    /// Consumes a directive and the rest of its line; returns the text.
    private mutating func directiveHeader() -> String {
        guard let first = current else { return "" }
        index += 1
        if first.text == "#if" || first.text == "#elseif" {
            while let token = current, !token.atLineStart { index += 1 }
        }
        return source.slice(first.start, previousEnd)
    }

    private mutating func parseDeclaration(ifConfig: inout [IfConfigClause]) -> MemberSyntax? {
        guard let first = current else { return nil }
        let attributes = parseAttributes()
        let modifiers = parseModifiers(allowClass: true)
        guard let keyword = current else { return nil }
        if keyword.kind == .pound || keyword.isPunctuation("}") {
            return nil
        }
        index += 1
        var member = MemberSyntax(
            kind: .other(keyword.text), attributes: attributes, modifiers: modifiers,
            keywordStart: keyword.start, keywordEnd: keyword.end, bindings: [], ifConfig: ifConfig,
            start: first.start, end: keyword.end)
        if keyword.isIdentifier("var") || keyword.isIdentifier("let") {
            member.kind = keyword.text == "var" ? .variable : .constant
            member.bindings = parseBindings()
        } else {
            skipToDeclarationEnd()
        }
        member.end = previousEnd
        return member
    }

    // MARK: - Bindings

    private mutating func parseBindings() -> [BindingSyntax] {
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
                    if depth == 0 && (t.isPunctuation(",") || t.isPunctuation("{") || t.isPunctuation("}") || t.isPunctuation(";")
                        || (t.kind == .operator && t.text.hasPrefix("=") && t.text != "==")
                        || (t.atLineStart && isDeclarationStart(t))) { break }
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

    private func isObserverBlock(at position: Int) -> Bool {
        var i = position + 1
        while i < tokens.count, tokens[i].kind == .attribute { i += 1 }
        guard i < tokens.count else { return false }
        return tokens[i].isIdentifier("willSet") || tokens[i].isIdentifier("didSet")
    }

    private func isAccessorBlock(at position: Int) -> Bool {
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

    private mutating func parseAccessorBlock() -> [AccessorSyntax] {
        index += 1  // `{`
        var accessors: [AccessorSyntax] = []
        while let token = current, !token.isPunctuation("}") {
            let start = token.start
            _ = parseAttributes()
            var kind = ""
            while let t = current, t.kind == .identifier, t.text == "mutating" || t.text == "nonmutating" || t.text == "borrowing" || t.text == "consuming" {
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
            accessors.append(AccessorSyntax(kind: kind, parameter: parameter, body: body, start: start, end: previousEnd))
        }
        if current != nil { index += 1 }
        return accessors
    }

    // MARK: - Attributes and modifiers

    mutating func parseAttributes() -> [AttributeSyntax] {
        var attributes: [AttributeSyntax] = []
        while let token = current, token.kind == .attribute {
            index += 1
            var name = String(token.text.dropFirst())
            // `@Module.Name`
            while let dot = current, dot.isOperator("."), dot.start == previousEnd, let next = peek(1), next.kind == .identifier {
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
    private mutating func parseArguments() -> [ArgumentSyntax] {
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
            arguments.append(ArgumentSyntax(label: label, value: value, valueText: source.slice(start, previousEnd), start: start, end: previousEnd))
            if let comma = current, comma.isPunctuation(",") { index += 1 }
        }
        if current != nil { index += 1 }
        return arguments
    }

    private mutating func parseModifiers(allowClass: Bool) -> [ModifierSyntax] {
        var modifiers: [ModifierSyntax] = []
        while let token = current, token.kind == .identifier, Self.modifierNames.contains(token.text) {
            if token.text == "class" {
                // `class` is a modifier only in members, and only before another declaration keyword or modifier.
                guard allowClass, let next = peek(1), next.kind == .identifier, next.text != "class",
                      ["var", "let", "func", "subscript", "init", "typealias"].contains(next.text) || Self.modifierNames.contains(next.text)
                else { break }
            }
            index += 1
            var detail: String?
            if let open = current, open.isPunctuation("("), let word = peek(1), word.kind == .identifier,
               let close = peek(2), close.isPunctuation(")") {
                detail = word.text
                index += 3
            }
            modifiers.append(ModifierSyntax(name: token.text, detail: detail, start: token.start, end: previousEnd))
        }
        return modifiers
    }

    // MARK: - Skipping

    private mutating func skipToDeclarationEnd() {
        var depth = 0
        while let token = current {
            if depth == 0 {
                if token.isPunctuation("}") || token.isPunctuation(";") { return }
                if token.atLineStart && isDeclarationStart(token) { return }
            }
            depth += Self.bracketDelta(token)
            index += 1
        }
    }

    private mutating func skipBalanced() {
        var depth = 0
        while let token = current {
            depth += Self.bracketDelta(token)
            index += 1
            if depth <= 0 { return }
        }
    }

    private mutating func skipAngleBrackets() {
        var depth = 0
        while let token = current {
            depth += Self.angleDelta(token)
            index += 1
            if depth <= 0 { return }
        }
    }

    func isDeclarationStart(_ token: Token) -> Bool {
        switch token.kind {
        case .attribute: return true
        case .pound: return ["#if", "#elseif", "#else", "#endif", "#warning", "#error", "#sourceLocation"].contains(token.text)
        case .identifier: return Self.declarationKeywords.contains(token.text) || Self.modifierNames.contains(token.text)
        default: return false
        }
    }

    static func bracketDelta(_ token: Token) -> Int {
        guard token.kind == .punctuation else { return 0 }
        switch token.text {
        case "(", "[", "{": return 1
        case ")", "]", "}": return -1
        default: return 0
        }
    }

    static func angleDelta(_ token: Token) -> Int {
        guard token.kind == .operator else { return 0 }
        let text = token.text.replacingArrows()
        var delta = 0
        for character in text {
            if character == "<" { delta += 1 } else if character == ">" { delta -= 1 }
        }
        return delta
    }

    // MARK: - Cursor

    private var current: Token? { index < tokens.count ? tokens[index] : nil }
    private func peek(_ ahead: Int) -> Token? { index + ahead < tokens.count ? tokens[index + ahead] : nil }
    private var previousEnd: Int { index > 0 ? tokens[index - 1].end : 0 }
}

extension String {
    var trimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    func replacingArrows() -> String {
        var result = ""
        var iterator = makeIterator()
        var pending: Character?
        while let character = pending ?? iterator.next() {
            pending = nil
            if character == "-", let next = iterator.next() {
                if next == ">" { continue }
                result.append(character)
                pending = next
                continue
            }
            result.append(character)
        }
        return result
    }
}
