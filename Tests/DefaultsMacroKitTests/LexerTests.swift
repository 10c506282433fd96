import Testing

@Suite struct LexerTests {
    func texts(_ source: String) -> [String] { Lexer.tokenize(source).map(\.text) }
    func kinds(_ source: String) -> [Token.Kind] { Lexer.tokenize(source).map(\.kind) }

    @Test func identifiersPunctuationAndOperators() {
        #expect(texts("var x: [Int] = [1, 2]") == ["var", "x", ":", "[", "Int", "]", "=", "[", "1", ",", "2", "]"])
        #expect(texts("a ?? b...c ..< d") == ["a", "??", "b", "...", "c", "..<", "d"])
        #expect(texts("x.y?.z!") == ["x", ".", "y", "?.", "z", "!"])
        #expect(texts(#"\.name"#) == ["\\", ".", "name"])
        #expect(texts("f(x)->Int") == ["f", "(", "x", ")", "->", "Int"])
    }

    @Test func numbers() {
        #expect(texts("1 2.5 0x1F 1e-3 1_000 -4") == ["1", "2.5", "0x1F", "1e-3", "1_000", "-", "4"])
        #expect(kinds("1.5") == [.number])
        #expect(texts("x.0.1") == ["x", ".", "0.1"])
    }

    @Test func plainStringsWithEscapesAndBraces() {
        let source = #"let s = "a { \" } b" + "c""#
        #expect(texts(source) == ["let", "s", "=", #""a { \" } b""#, "+", #""c""#])
    }

    @Test func interpolationWithNestedParenthesesAndStrings() {
        let literal = #""outer \("inner \(f(")", (1 + 2)))") end""#
        #expect(texts("x = \(literal) + y") == ["x", "=", literal, "+", "y"])
    }

    @Test func multiLineStrings() {
        let literal = "\"\"\"\n  line \"quoted\" { \n  \\(a + \"\"\"\n  nested\n  \"\"\")\n  \"\"\""
        let tokens = Lexer.tokenize("var m = \(literal)\nvar n = 1")
        #expect(tokens.map(\.text) == ["var", "m", "=", literal, "var", "n", "=", "1"])
        #expect(tokens[4].atLineStart)
    }

    @Test func rawStrings() {
        let raw = ##"#"raw "quoted" \(not interpolated) { "#"##
        #expect(texts("a = \(raw) b") == ["a", "=", raw, "b"])
        let interpolated = ##"#"v \#(1 + ")") "x""#"##
        #expect(texts("a = \(interpolated)") == ["a", "=", interpolated])
        let rawMulti = "#\"\"\"\n\"\"\" still inside\n\"\"\"#"
        #expect(texts("a = \(rawMulti)") == ["a", "=", rawMulti])
    }

    @Test func nestedCommentsAreTrivia() {
        #expect(texts("a /* x /* y */ { \" */ b // c { \n d") == ["a", "b", "d"])
        let tokens = Lexer.tokenize("a /* \n */ b")
        #expect(tokens[1].atLineStart)
    }

    @Test func attributesAndDirectives() {
        #expect(
            kinds("@DefaultsKey(userDefaultsKey: \"k\") #if os(Linux) #endif").prefix(2) == [.attribute, .punctuation])
        #expect(texts("@MainActor #if DEBUG\n#else\n#endif") == ["@MainActor", "#if", "DEBUG", "#else", "#endif"])
        #expect(kinds("#if") == [.pound])
    }

    @Test func backticksAndUnicode() {
        let tokens = Lexer.tokenize("var `default` = 1; var größe = 名前")
        #expect(tokens.map(\.text) == ["var", "`default`", "=", "1", ";", "var", "größe", "=", "名前"])
        #expect(tokens[1].identifierName == "default")
    }

    @Test func utf8Offsets() {
        let tokens = Lexer.tokenize("é x")
        #expect(tokens[0].start == 0 && tokens[0].end == 2)
        #expect(tokens[1].start == 3 && tokens[1].end == 4)
    }

    @Test func unterminatedInputNeverCrashes() {
        for source in ["\"abc", "\"\"\"\nabc", "#\"abc", "/* open", "\"\\(", "`abc", "@", "#", "\"\\"] {
            _ = Lexer.tokenize(source)
        }
    }
}
