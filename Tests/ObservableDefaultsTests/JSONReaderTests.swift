import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct JSONReaderTests {
    @Test func readsEveryKindOfValue() throws {
        let values = try parseJSON(
            """
            {"s": "x\\u00e9\\ud83c\\udf89\\/", "i": -42, "d": 5.0, "e": 1E3, "b": true, "f": false,
             "a": [1, 2.5, "three", [], {}], "o": {"k": {"deep": 0}}, "big": 9223372036854775808,
             "min": -9223372036854775808, "max": 9223372036854775807, "nan": NaN, "inf": Infinity, "ninf": -Infinity,
             "gone": null, "nz": -0.0}
            """)
        #expect(values["s"] == .string("xé🎉/"))
        #expect(values["i"] == .integer(-42))
        #expect(values["d"] == .double(5))
        #expect(values["e"] == .double(1000))
        #expect(values["b"] == .bool(true))
        #expect(values["f"] == .bool(false))
        #expect(values["a"] == .array([.integer(1), .double(2.5), .string("three"), .array([]), .dictionary([:])]))
        #expect(values["o"] == .dictionary(["k": .dictionary(["deep": .integer(0)])]))
        #expect(values["big"] == .double(9_223_372_036_854_775_808))
        #expect(values["min"] == .integer(.min))
        #expect(values["max"] == .integer(.max))
        #expect(values["nan"] == .double(.nan))
        #expect(values["inf"] == .double(.infinity))
        #expect(values["ninf"] == .double(-.infinity))
        #expect(values["gone"] == nil)
        #expect(values.keys.contains("gone") == false)
        #expect(values["nz"] == .double(-0.0))
    }

    /// A document of one value of any kind (an etcd answer, a cloud value's text).
    @Test func aDocumentHoldsOneValueOfAnyKind() throws {
        #expect(try JSONReader.parseDocument(Data("42".utf8)) == .integer(42))
        #expect(try JSONReader.parseDocument(Data(" \"x\\ny\" \n".utf8)) == .string("x\ny"))
        #expect(try JSONReader.parseDocument(Data("\u{FEFF}[true, 1.5]".utf8)) == .array([.bool(true), .double(1.5)]))
        #expect(
            try JSONReader.parseDocument(Data(#"{"a": {"b": "9223372036854775807"}, "gone": null}"#.utf8))
                == .dictionary(["a": .dictionary(["b": .string("9223372036854775807")])]))
        #expect(try JSONReader.parseDocument(Data("null".utf8)) == nil)
    }

    @Test func aDocumentWithAnythingAfterItsValueIsAnErrorAtThatPlace() {
        #expect(throws: DefaultsError.self) { try JSONReader.parseDocument(Data("".utf8)) }
        do {
            _ = try JSONReader.parseDocument(Data("{\"a\": 1}\n  x".utf8))
            Issue.record("trailing text was accepted")
        } catch {
            #expect(error.message.contains("expected end of file after the value, found 'x'"), "\(error.message)")
            #expect(error.line == 2 && error.column == 3, "\(error)")
        }
        #expect(throws: DefaultsError.self) { try JSONReader.parseDocument(Data("[1,]".utf8)) }
        #expect(throws: DefaultsError.self) {
            try JSONReader.parseDocument(Data(String(repeating: "[", count: 600).utf8))
        }
    }

    @Test func emptyAndWhitespaceFilesAreEmptySuites() throws {
        #expect(try parseJSON("") == [:])
        #expect(try parseJSON(" \n\t\r\n") == [:])
        #expect(try parseJSON("\u{FEFF}{}") == [:])
    }

    @Test func duplicateKeysKeepTheLastValue() throws {
        #expect(try parseJSON(#"{"a": 1, "a": 2}"#) == ["a": .integer(2)])
        #expect(try parseJSON(#"{"a": 1, "a": null}"#) == [:])
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "truncated", text: "{\n  \"a\": 1,\n  \"b\": [1, 2", line: 3, column: 13,
            message: "expected ',' or ']' after a value in an array, found end of file"),
        ErrorCase(
            name: "truncated after key", text: "{\n  \"a\"", line: 2, column: 6,
            message: "expected ':' after a key in an object, found end of file"),
        ErrorCase(
            name: "comma alone in object", text: "{\n  ,\n}", line: 2, column: 3,
            message: "expected a string key in an object, found ','"),
        ErrorCase(
            name: "two trailing commas in array", text: "{\"a\": [1, 2,,]}", line: 1, column: 13,
            message: "expected a value in an array, found ','"),
        ErrorCase(
            name: "missing colon", text: "{\n  \"a\" 1\n}", line: 2, column: 7,
            message: "expected ':' after a key in an object, found '1'"),
        ErrorCase(
            name: "missing colon with CRLF line ends", text: "{\r\n  \"a\" 1\r\n}", line: 2, column: 7,
            message: "expected ':' after a key in an object, found '1'"),
        ErrorCase(
            name: "missing comma", text: "{\"a\": 1 \"b\": 2}", line: 1, column: 9,
            message: "expected ',' or '}' after a value in an object, found '\"'"),
        ErrorCase(
            name: "bad escape", text: "{\"é\": \"x\\qy\"}", line: 1, column: 10,
            message:
                "invalid escape sequence in a string: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX after '\\', found 'qy'"
        ),
        ErrorCase(
            name: "unterminated string", text: "{\"a\": \"abc", line: 1, column: 7,
            message: "unterminated string: expected '\"', found end of file"),
        ErrorCase(
            name: "unterminated string at line end", text: "{\"a\": \"abc\n}", line: 1, column: 11,
            message: "expected '\"' to end the string, found U+000A (control characters in strings must be escaped)"),
        ErrorCase(
            name: "null in array", text: "{\n  \"a\": [1, null]\n}", line: 2, column: 12,
            message:
                "expected a value in an array, found 'null' (null is only allowed as an object value, where it means the key is absent)"
        ),
        ErrorCase(
            name: "top level array", text: "  [1, 2]", line: 1, column: 3,
            message: "expected '{' (the top level of a suite file must be an object), found '['"),
        ErrorCase(
            name: "top level string", text: "\"x\"", line: 1, column: 1,
            message: "expected '{' (the top level of a suite file must be an object), found '\"'"),
        ErrorCase(
            name: "slash that starts no comment", text: "{\n  / comment\n}", line: 2, column: 3,
            message: "expected a string key in an object, found '/'"),
        ErrorCase(
            name: "unterminated comment", text: "{\"a\": 1 /* to do\n}", line: 1, column: 9,
            message: "unterminated comment: expected '*/', found end of file"),
        ErrorCase(
            name: "error after a comment", text: "{ /* a \"b\" */\n  \"a\" // x\n  1 }", line: 3, column: 3,
            message: "expected ':' after a key in an object, found '1'"),
        ErrorCase(
            name: "unquoted value", text: "{\"a\": hello}", line: 1, column: 7,
            message: "expected a value after ':' in an object, found 'hello'"),
        ErrorCase(
            name: "leading zero", text: "{\"a\": 012}", line: 1, column: 7,
            message: "numbers must not have leading zeros"),
        ErrorCase(
            name: "bare minus", text: "{\"a\": -}", line: 1, column: 8,
            message: "expected a digit in a number, found '}'"),
        ErrorCase(
            name: "fraction without digits", text: "{\"a\": 1.}", line: 1, column: 9,
            message: "expected a digit after '.' in a number, found '}'"),
        ErrorCase(
            name: "garbage after object", text: "{}\n}", line: 2, column: 1,
            message: "expected end of file after the top-level object, found '}'"),
        ErrorCase(
            name: "lone surrogate", text: "{\"a\": \"\\ud800x\"}", line: 1, column: 8,
            message: "unpaired surrogate in a string: expected a \\uXXXX low surrogate after a high surrogate"),
        ErrorCase(
            name: "short unicode escape", text: "{\"a\": \"\\u12\"}", line: 1, column: 12,
            message: "expected 4 hexadecimal digits after '\\u', found '\"'"),
        ErrorCase(
            name: "column counts characters", text: "{\"日本🎉\": tru}", line: 1, column: 9,
            message: "expected a value after ':' in an object, found 'tru'")
    ]

    @Test(arguments: errorCases)
    func errorsNameLineColumnAndExpectation(_ errorCase: ErrorCase) throws {
        let error = try #require(jsonError(errorCase.text))
        #expect(error.kind == .malformedFile)
        #expect(error.message == errorCase.message)
        #expect(error.line == errorCase.line)
        #expect(error.column == errorCase.column)
        #expect(error.fileURL?.path == "/tmp/test.json")
    }

    @Test func errorDescriptionReadsLikeACompilerDiagnostic() throws {
        let error = try #require(jsonError("{\"a\": 1 2}"))
        #expect(
            error.description == "/tmp/test.json:1:9: error: expected ',' or '}' after a value in an object, found '2'")
    }

    @Test func rejectsInvalidUTF8() throws {
        var bytes = Array("{\"a\": \"".utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array("\"}".utf8)
        #expect(throws: DefaultsError.self) {
            try SuiteFormat.json.decode(Data(bytes), fileURL: URL(fileURLWithPath: "/tmp/x.json"))
        }
    }

    @Test func rejectsExcessiveNesting() throws {
        let text = "{\"a\": " + String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000) + "}"
        let error = try #require(jsonError(text))
        #expect(error.message.contains("nested"))
    }

    /// A 100,000-key file round-trips exactly. How fast it loads is the benchmark's business (group 6's
    /// 100,000-key rows and their < 500 ms target), not a timed assertion here.
    @Test func parsesALargeFile() throws {
        var values: [ExactKey: DefaultsValue] = [:]
        for i in 0..<100_000 {
            values[ExactKey("key.\(i)")] =
                i % 3 == 0 ? .integer(i) : i % 3 == 1 ? .string("value number \(i)") : .double(Double(i) / 7)
        }
        let data = try SuiteFormat.json.encode(values)
        let parsed = try SuiteFormat.json.decode(data, fileURL: URL(fileURLWithPath: "/tmp/large.json"))
        #expect(parsed == values)
    }
}
