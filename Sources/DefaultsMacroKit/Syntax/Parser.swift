/// A declaration parser for what the macros need: type declarations with their member lists, and
/// property declarations with attributes, modifiers, bindings, types, initializers and accessors.
/// It never fails: malformed input yields a best-effort structure.
public struct DeclParser {
    /// The text being parsed.
    public let source: SourceText
    let tokens: [Token]
    var index = 0

    static let modifierNames: Set<String> = [
        "public", "private", "fileprivate", "internal", "package", "open", "static", "class", "final", "lazy",
        "override", "weak", "unowned", "nonisolated", "dynamic", "mutating", "nonmutating", "convenience",
        "required", "optional", "indirect", "isolated", "consuming", "borrowing", "distributed", "prefix",
        "postfix", "infix", "unsafe"
    ]
    static let declarationKeywords: Set<String> = [
        "var", "let", "func", "init", "deinit", "subscript", "typealias", "associatedtype", "struct", "class",
        "enum", "actor", "protocol", "extension", "case", "import", "operator", "precedencegroup", "macro"
    ]
    static let accessorNames: Set<String> = [
        "get", "set", "willSet", "didSet", "init", "_modify", "_read", "modify", "read", "yielding",
        "unsafeAddress", "unsafeMutableAddress", "mutating", "nonmutating", "borrowing", "consuming"
    ]

    /// Creates a parser positioned at the first token of `text`.
    public init(_ text: String) {
        self.source = SourceText(text)
        self.tokens = Lexer.tokenize(text)
    }

    /// Creates a parser for the header of the type declaration in `text` (attributes, modifiers, keyword,
    /// name, generics, inheritance): ``parseTypeDecl()`` then returns it without members.
    public init(typeHeaderOf text: String) {
        self.source = SourceText(text)
        self.tokens = Lexer.tokenizeHeader(text)
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

    mutating func parseMembers() -> [MemberSyntax] {
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

    mutating func parseDirective(_ clauses: inout [IfConfigClause]) {
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
    mutating func directiveHeader() -> String {
        guard let first = current else { return "" }
        index += 1
        if first.text == "#if" || first.text == "#elseif" {
            while let token = current, !token.atLineStart { index += 1 }
        }
        return source.slice(first.start, previousEnd)
    }

    mutating func parseDeclaration(ifConfig: inout [IfConfigClause]) -> MemberSyntax? {
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

    // MARK: - Skipping

    mutating func skipToDeclarationEnd() {
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

    /// Skips a bracketed group (`( … )`, `[ … ]`, `{ … }`) starting at its opening bracket.
    mutating func skipBalanced() { skipGroup(nesting: Self.bracketDelta) }

    /// Skips a generic clause `< … >` starting at its `<`.
    mutating func skipAngleBrackets() { skipGroup(nesting: Self.angleDelta) }

    /// Skips tokens up to and including the one that closes the group opened by the current token, with
    /// `nesting` telling how much each token opens (positive) or closes (negative).
    private mutating func skipGroup(nesting: (Token) -> Int) {
        var depth = 0
        while let token = current {
            depth += nesting(token)
            index += 1
            if depth <= 0 { return }
        }
    }

    func isDeclarationStart(_ token: Token) -> Bool {
        switch token.kind {
        case .attribute: return true
        case .pound:
            return ["#if", "#elseif", "#else", "#endif", "#warning", "#error", "#sourceLocation"].contains(token.text)
        case .identifier:
            return Self.declarationKeywords.contains(token.text) || Self.modifierNames.contains(token.text)
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

    var current: Token? { index < tokens.count ? tokens[index] : nil }
    func peek(_ ahead: Int) -> Token? { index + ahead < tokens.count ? tokens[index + ahead] : nil }
    var previousEnd: Int { index > 0 ? tokens[index - 1].end : 0 }
}
