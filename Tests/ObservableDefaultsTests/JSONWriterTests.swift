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
            "nested": .dictionary(["z": .double(0.5), "a": .bool(false)]),
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
        (5.0, "5.0"), (-0.0, "-0.0"), (0.1, "0.1"), (1e300, "1e300"), (1e-5, "1e-5"), (.leastNonzeroMagnitude, "5e-324"),
        (1e16, "1e16"), (1.5e-7, "1.5e-7"), (-2.5e+20, "-2.5e20"), (.nan, "NaN"), (.infinity, "1e999"),
        (-.infinity, "-1e999"),
    ])
    func doubleText(double: Double, text: String) {
        #expect(JSONWriter.text(for: double) == text)
    }

    @Test func stringsEscapeQuotesBackslashesAndControlCharactersButNotUnicode() throws {
        let text = try jsonText(["k": .string("\"\\\n\r\t\u{8}\u{C}\u{1}\u{1F}é🎉/")])
        #expect(text == #"""
            {
              "k": "\"\\\n\r\t\b\f\u0001\u001Fé🎉/"
            }

            """#)
    }

    @Test func datesAndDataAreWrittenInTheirNormalisedForm() throws {
        let date = Date(timeIntervalSince1970: 1_714_566_600.1234)
        let values: [String: DefaultsValue] = ["d": .date(date), "b": .data(Data([0, 1, 2, 250])), "a": .array([.date(date)])]
        let encoded = try SuiteFormat.json.encode(values.exactKeyed)
        let normalized = try SuiteFormat.json.encode(values.mapValues(SuiteFormat.json.normalize).exactKeyed)
        #expect(encoded == normalized)
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"d\": \"2024-05-01T12:30:00.123Z\""))
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"b\": \"AAEC+g==\""))
    }
}
