import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct JSONWriterTests {
    @Test func goldenOutputIsPrettySortedAndEndsWithANewline() throws {
        let values: [String: DefaultsValue] = [
            "workers": .integer(4),
            "logLevel": .string("info"),
            "ratio": .double(5),
            "enabled": .bool(true),
            "tags": .array([.string("a"), .integer(-1)]),
            "empty": .dictionary([:]),
            "none": .array([]),
            "nested": .dictionary(["z": .double(0.5), "a": .bool(false)])
        ]
        let expected = """
            {
              "empty": {},
              "enabled": true,
              "logLevel": "info",
              "nested": {
                "a": false,
                "z": 0.5
              },
              "none": [],
              "ratio": 5.0,
              "tags": [
                "a",
                -1
              ],
              "workers": 4
            }

            """
        #expect(try jsonText(values) == expected)
    }

    @Test func emptySuiteIsAnEmptyObject() throws {
        #expect(try jsonText([:]) == "{}\n")
    }

    @Test(arguments: [
        (5.0, "5.0"), (-0.0, "-0.0"), (0.1, "0.1"), (1e300, "1e300"), (1e-5, "1e-5"),
        (.leastNonzeroMagnitude, "5e-324"),
        (1e16, "1e16"), (1.5e-7, "1.5e-7"), (-2.5e+20, "-2.5e20"), (.nan, "NaN"), (.infinity, "1e999"),
        (-.infinity, "-1e999")
    ])
    func doubleText(double: Double, text: String) {
        #expect(JSONWriter.text(for: double) == text)
    }

    @Test func stringsEscapeQuotesBackslashesAndControlCharactersButNotUnicode() throws {
        let text = try jsonText(["k": .string("\"\\\n\r\t\u{8}\u{C}\u{1}\u{1F}é🎉/")])
        #expect(
            text == #"""
                {
                  "k": "\"\\\n\r\t\b\f\u0001\u001Fé🎉/"
                }

                """#)
    }

    @Test func datesAndDataAreWrittenInTheirNormalisedForm() throws {
        let date = Date(timeIntervalSince1970: 1_714_566_600.1234)
        let values: [String: DefaultsValue] = [
            "d": .date(date), "b": .data(Data([0, 1, 2, 250])), "a": .array([.date(date)])
        ]
        let encoded = try SuiteFormat.json.encode(values.exactKeyed)
        let normalized = try SuiteFormat.json.encode(values.mapValues(SuiteFormat.json.normalize).exactKeyed)
        #expect(encoded == normalized)
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"d\": \"2024-05-01T12:30:00.123Z\""))
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"b\": \"AAEC+g==\""))
    }

    /// A value alone (the cloud's text of a value) is exactly its member's text in a suite file, one level
    /// less indented: the text a suite holds after `"v": `, cut out line by line.
    @Test func aValueAloneIsItsSuiteMemberTextOneLevelOut() {
        let values: [DefaultsValue] = [
            .string("plain"), .string("x\n\"y\" \u{7} caf\u{E9} \u{1F600}"), .string(""), .integer(-42), .integer(.max),
            .double(0.1), .double(5), .double(-1e300), .bool(false),
            .date(Date(timeIntervalSince1970: 1_714_566_600.123)), .data(Data([0, 1, 2, 250])),
            .array([]), .dictionary([:]),
            .array([.integer(1), .array([.string("a"), .dictionary([:])]), .dictionary(["k": .array([])])]),
            .dictionary([
                "b": .array([.integer(1), .double(2)]), "a": .string("x"),
                "c": .dictionary(["z": .bool(true), "y": .dictionary(["q": .integer(0)])])
            ])
        ]
        for value in values {
            let suite = String(decoding: JSONWriter.encodeSuite(["v": value]), as: UTF8.self)
            var lines = suite.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().dropLast(2).map(
                String.init)
            lines[0] = String(lines[0].dropFirst(#"  "v": "#.count))
            for index in lines.indices.dropFirst() { lines[index] = String(lines[index].dropFirst(2)) }
            #expect(
                String(decoding: JSONWriter.encodeValue(value), as: UTF8.self) == lines.joined(separator: "\n"),
                "\(value)")
        }
    }
}
