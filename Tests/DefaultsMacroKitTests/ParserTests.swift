import Testing

@Suite struct ParserTests {
    func parseType(_ source: String) -> TypeDeclSyntax? {
        var parser = DeclParser(source)
        return parser.parseTypeDecl()
    }

    func parseMember(_ source: String) -> MemberSyntax? {
        var parser = DeclParser(source)
        return parser.parseMember()
    }

    @Test func classHeader() throws {
        let type = try #require(
            parseType(
                """
                // leading comment
                @MainActor @ObservableDefaults(suiteName: "s")
                public final class Box<T: Codable>: Base, Sendable where T: Sendable {
                }
                """))
        #expect(type.keyword == "class")
        #expect(type.name == "Box")
        #expect(type.genericParameters == "<T: Codable>")
        #expect(type.inheritance == ["Base", "Sendable"])
        #expect(type.attributes.map(\.name) == ["MainActor", "ObservableDefaults"])
        #expect(type.accessLevel == "public")
        #expect(type.attributes[1].argument("suiteName")?.valueText == "\"s\"")
    }

    /// The member-attribute role reads only the class header: the same header as a full parse, no members,
    /// and the lexer stops at the body's brace (braces inside attribute arguments do not stop it).
    @Test func typeHeaderOnly() throws {
        let source = """
            @ObservableDefaults(suiteName: "s", prefix: "{") @Wrapper(closure: { 1 })
            final class Box<T>: Base where T: Sendable {
                var a = 1
                var b = "}"
            }
            """
        var headerParser = DeclParser(typeHeaderOf: source)
        let parsedHeader = headerParser.parseTypeDecl()
        let header = try #require(parsedHeader)
        let full = try #require(parseType(source))
        #expect(header.members.isEmpty)
        #expect(full.members.count == 2)
        #expect(header.attributes == full.attributes)
        #expect(header.keyword == "class" && header.name == "Box" && header.genericParameters == "<T>")
        #expect(header.inheritance == full.inheritance)
        let bodyBrace =
            source.utf8.distance(from: source.startIndex, to: try #require(source.range(of: "Sendable {")).upperBound)
            - 1
        #expect(Lexer.tokenizeHeader(source).last.map { [$0.text, String($0.start)] } == ["{", String(bodyBrace)])
    }

    @Test func otherTypeKinds() {
        #expect(parseType("struct S {}")?.keyword == "struct")
        #expect(parseType("enum E { case a }")?.keyword == "enum")
        #expect(parseType("actor A {}")?.keyword == "actor")
        #expect(parseType("extension A.B {}")?.name == "A.B")
        #expect(parseType("") == nil)
    }

    @Test func memberList() throws {
        let type = try #require(
            parseType(
                """
                class C {
                    var a = 1
                    let b: String
                    static var s = 0
                    class var c: Int { 1 }
                    lazy var l = [1]
                    var computed: Int { a * 2 }
                    var accessors: Int {
                        get { a }
                        set { a = newValue }
                    }
                    func f() -> Int { let x = 1; return x }
                    init() { b = "" }
                    struct Nested { var z = 1 }
                    var last = "end"
                }
                """))
        #expect(type.members.count == 11)
        let names = type.members.map { $0.bindings.first?.name ?? "<\($0.kind)>" }
        #expect(
            names == [
                "a", "b", "s", "c", "l", "computed", "accessors", "<other(\"func\")>", "<other(\"init\")>",
                "<other(\"struct\")>", "last"
            ])
        #expect(type.members[2].isStatic && type.members[3].isStatic)
        #expect(type.members[4].hasModifier("lazy"))
        #expect(!type.members[5].bindings[0].isStored)
        #expect(!type.members[6].bindings[0].isStored)
        #expect(type.members[1].kind == .constant)
    }

    @Test func modifiersWithDetail() throws {
        let member = try #require(parseMember("public private(set) var x = 1"))
        #expect(member.modifiers.map(\.name) == ["public", "private"])
        #expect(member.modifiers[1].detail == "set")
        #expect(member.bindings[0].initializer == "1")
    }

    @Test func initializersEndAtTheNextDeclaration() throws {
        let type = try #require(
            parseType(
                """
                class C {
                    var chained = "a"
                        .uppercased()
                        + "b"
                    var closure: [Int] = {
                        var v = [1]
                        return v
                    }()
                    var trailing = [1, 2].map { $0 * 2 }
                    var dict = [
                        "a": 1, // } comment
                    ]
                    var s = "{ \\(x.map { "}" }) }" ; var t = 2
                    @Attr var u = 3
                }
                """))
        let initializers = type.members.map { $0.bindings.first?.initializer }
        #expect(initializers[0] == "\"a\"\n        .uppercased()\n        + \"b\"")
        #expect(initializers[1]?.hasPrefix("{") == true && initializers[1]?.hasSuffix("}()") == true)
        #expect(initializers[2] == "[1, 2].map { $0 * 2 }")
        #expect(initializers[3]?.hasSuffix("]") == true)
        #expect(initializers[4] == "\"{ \\(x.map { \"}\" }) }\"")
        #expect(initializers[5] == "2")
        #expect(type.members[6].attributes.map(\.name) == ["Attr"])
        #expect(type.members.count == 7)
    }

    @Test func observersAfterAnInitializer() throws {
        let member = try #require(
            parseMember(
                """
                var value: Int = 0 {
                    willSet(next) { print(next) }
                    didSet { print("{", oldValue) }
                }
                """))
        let binding = member.bindings[0]
        #expect(binding.isStored)
        #expect(binding.initializer == "0")
        #expect(binding.accessor("willSet")?.parameter == "next")
        #expect(binding.accessor("didSet")?.body.contains("print(\"{\", oldValue)") == true)
    }

    @Test func typesWithGenericsAndFunctions() throws {
        let member = try #require(parseMember("var f: Dictionary<String, Array<Int>>? = nil"))
        #expect(member.bindings[0].type == "Dictionary<String, Array<Int>>?")
        let function = try #require(parseMember("var g: (Int) -> [String: Int] = { _ in [:] }"))
        #expect(function.bindings[0].type == "(Int) -> [String: Int]")
        #expect(function.bindings[0].initializer == "{ _ in [:] }")
    }

    @Test func multipleBindings() throws {
        let member = try #require(parseMember("var a = 1, b: Int = 2, c: String"))
        #expect(member.bindings.map(\.name) == ["a", "b", "c"])
        #expect(member.bindings.map(\.initializer) == ["1", "2", nil])
    }

    @Test func backtickedAndUnicodeNames() throws {
        #expect(parseMember("var `class` = 1")?.bindings[0].name == "class")
        #expect(parseMember("var `class` = 1")?.bindings[0].nameText == "`class`")
        #expect(parseMember("var größe = 1")?.bindings[0].name == "größe")
    }

    @Test func ifConfigClauses() throws {
        let type = try #require(
            parseType(
                """
                class C {
                    #if os(Linux)
                    var a = 1
                    #elseif DEBUG
                    var b = 2
                    #else
                    #if X
                    var c = 3
                    #endif
                    #endif
                    var d = 4
                }
                """))
        #expect(type.members.map { $0.bindings[0].name } == ["a", "b", "c", "d"])
        #expect(type.members[0].ifConfig == [IfConfigClause(previousHeaders: [], header: "#if os(Linux)")])
        #expect(
            type.members[1].ifConfig == [IfConfigClause(previousHeaders: ["#if os(Linux)"], header: "#elseif DEBUG")])
        #expect(
            type.members[2].ifConfig == [
                IfConfigClause(previousHeaders: ["#if os(Linux)", "#elseif DEBUG"], header: "#else"),
                IfConfigClause(previousHeaders: [], header: "#if X")
            ])
        #expect(type.members[3].ifConfig.isEmpty)
    }

    @Test func attributesWithArgumentsAndQualifiedNames() throws {
        let member = try #require(
            parseMember(#"@ObservableDefaults.DefaultsKey(userDefaultsKey: "a,b") @available(*, deprecated) var x = 1"#)
        )
        #expect(member.attributes.map(\.name) == ["DefaultsKey", "available"])
        #expect(member.attributes[0].argument("userDefaultsKey")?.valueText == #""a,b""#)
        #expect(member.attributes[1].arguments?.count == 2)
    }

    @Test func malformedInputNeverCrashes() {
        for source in [
            "class", "class C {", "class C { var", "class C { var x: ", "class C { var x = ", "var (a, b) = (1, 2)",
            "var x { get", "@", "}}}", "class C<T { }"
        ] {
            _ = parseType(source)
            _ = parseMember(source)
        }
    }

    @Test func stringLiteralValues() {
        #expect(StringLiteral.value(of: #""a\nb\"c""#) == "a\nb\"c")
        #expect(StringLiteral.value(of: ##"#"raw \n"#"##) == "raw \\n")
        #expect(StringLiteral.value(of: #""\u{1F600}""#) == "😀")
        #expect(StringLiteral.value(of: #""a\(b)""#) == nil)
        #expect(StringLiteral.quote("a\"b\\c\n") == #""a\"b\\c\n""#)
    }

    /// Multi-line and raw literals read as the compiler reads them; an interpolation in any form is no value.
    @Test func multiLineAndRawStringLiteralValues() {
        // The closing delimiter's indentation is removed from every line, with the first and last line breaks.
        #expect(StringLiteral.value(of: "\"\"\"\n    a\n      b\n    \"\"\"") == "a\n  b")
        #expect(StringLiteral.value(of: "\"\"\"\n\"\"\"") == "")
        #expect(
            StringLiteral.value(of: "\"\"\"\n  a\n\n  b\n  \"\"\"") == "a\n\nb", "a blank line may be less indented")
        #expect(StringLiteral.value(of: "\"\"\"\r\n  a\r\n  \"\"\"") == "a")
        // An escaped line break joins lines (spaces may follow the backslash); escapes work as usual.
        #expect(StringLiteral.value(of: "\"\"\"\n  a\\\n  b\\  \n  c\\t\n  \"\"\"") == "abc\t")
        #expect(StringLiteral.value(of: "\"\"\"\n  a\\\n  \"\"\"") == "a")
        #expect(StringLiteral.value(of: "\"\"\"\n  a \\(b)\n  \"\"\"") == nil)
        #expect(StringLiteral.value(of: "\"\"\"\n a\n  \"\"\"") == nil, "insufficient indentation")
        // Raw literals: `\` is plain text unless followed by the delimiter's `#`s.
        #expect(StringLiteral.value(of: ##"#"a\b\#n"#"##) == "a\\b\n")
        #expect(StringLiteral.value(of: ###"##"a"#b\#n\##t"##"###) == "a\"#b\\#n\t")
        #expect(StringLiteral.value(of: ##"#"a\#(b)"#"##) == nil)
        #expect(StringLiteral.value(of: "#\"\"\"\n  raw \\n\n  \"\"\"#") == "raw \\n")
        #expect(StringLiteral.value(of: "#\"\"\"\n  \\#(b)\n  \"\"\"#") == nil)
        #expect(StringLiteral.value(of: ##"#""""#"##) == "\"\"", "a raw literal holding two quotes")
        // Not literals, or not whole ones.
        for text in [#""a" + "b""#, "name", #""a\q""#, #""\u{}""#, #""\u{110000}""#, "\"", #""a"#, "\"a\nb\""] {
            #expect(StringLiteral.value(of: text) == nil, "\(text)")
        }
    }
}
