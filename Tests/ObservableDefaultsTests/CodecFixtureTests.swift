import Foundation
import Testing
@testable import ObservableDefaults

/// Loads every file under `Fixtures/` and checks its exact values or its exact error position.
@Suite struct CodecFixtureTests {
    func load(_ path: String, _ format: SuiteFormat) throws -> [String: DefaultsValue] {
        try format.decode(try Fixtures.data(path), fileURL: Fixtures.url(path)).stringKeyed
    }

    func loadError(_ path: String, _ format: SuiteFormat) throws -> DefaultsError {
        try #require(throws: DefaultsError.self) { try load(path, format) }
    }

    @Test func jsonSettings() throws {
        let values = try load("json/settings.json", .json)
        #expect(
            values == [
                "appearance": .dictionary([
                    "accent": .string("#3478F6"), "fontSize": .double(13.5), "theme": .string("dark")
                ]),
                "endpoint": .string("https://api.example.com/v2/"),
                "greeting": .string("Grüß dich, 世界 👋 \"quoted\"\tand\\backslash"),
                "lastReload": .string("2024-05-01T12:30:00.123Z"),
                "launchCount": .integer(42),
                "logLevel": .string("info"),
                "maxInt": .integer(.max),
                "minInt": .integer(.min),
                "notANumber": .double(.nan),
                "ratio": .double(5),
                "recentFiles": .array([.string("/home/me/notes.txt"), .string("/tmp/a b.log")]),
                "showHidden": .bool(false),
                "signature": .string("3q2+7w=="),
                "threshold": .double(-.infinity),
                "verbose": .bool(true),
                "window": .dictionary([
                    "frame": .array([.integer(0), .integer(0), .double(1280), .double(800.5)]),
                    "title": .string("Main"), "zoomed": .bool(false)
                ]),
                "workers": .integer(4)
            ])
        #expect(values["timeout"] == nil)
        #expect(Date(defaultsValue: values["lastReload"]!) != nil)
        #expect(Data(defaultsValue: values["signature"]!) == Data([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(URL(defaultsValue: values["endpoint"]!) == URL(string: "https://api.example.com/v2/"))
    }

    @Test func jsonSettingsRewriteIsStable() throws {
        // The hand-written file is already in the writer's layout except for its `null` entry.
        let text = try String(contentsOf: Fixtures.url("json/settings.json"), encoding: .utf8)
        let expected = text.replacingOccurrences(of: "  \"timeout\": null,\n", with: "")
        // Its NaN and -Infinity (written by earlier versions) are kept as they are, with the spellings the
        // reader found; the writer alone never writes them.
        var spellings = JSONNumberSpellings()
        let values = try SuiteFormat.json.decode(
            try Fixtures.data("json/settings.json"), fileURL: Fixtures.url("json/settings.json"), spellings: &spellings)
        var entries = SuiteFormat.sortedEntries(of: values)
        let bytes = try SuiteFormat.json.encodeBytes(&entries, reusing: nil, capacity: 0, spellings: spellings)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        let plain = try jsonText(values.stringKeyed)
        #expect(plain.contains("\"threshold\": -1e999,"))
    }

    static let plistSettings: [String: DefaultsValue] = [
        "appearance": .dictionary(["fontSize": .double(13.5), "theme": .string("dark")]),
        "greeting": .string("Grüß dich, 世界 👋 <&>"),
        "lastReload": .date(Date(timeIntervalSince1970: 1_714_566_600)),
        "launchCount": .integer(42),
        "maxInt": .integer(.max),
        "minInt": .integer(.min),
        "ratio": .double(5),
        "recentFiles": .array([.string("/home/me/notes.txt"), .string("/tmp/a b.log")]),
        "showHidden": .bool(false),
        "signature": .data(Data([0xDE, 0xAD, 0xBE, 0xEF])),
        "empty": .dictionary([:]),
        "verbose": .bool(true),
        "workers": .integer(4)
    ]

    @Test func xmlPropertyListSettings() throws {
        #expect(try load("plist/settings-xml.plist", .propertyList) == Self.plistSettings)
    }

    @Test func binaryPropertyListSettings() throws {
        #expect(try load("plist/settings-binary.plist", .propertyList) == Self.plistSettings)
    }

    @Test func truncatedJSON() throws {
        let error = try loadError("broken/truncated.json", .json)
        #expect(error.kind == .malformedFile)
        #expect(error.message == "unterminated string: expected '\"', found end of file")
        #expect(error.line == 5)
        #expect(error.column == 14)
        #expect(error.fileURL == Fixtures.url("broken/truncated.json"))
    }

    /// Trailing commas (in arrays and objects) are accepted, as in VS Code's `settings.json`.
    @Test func trailingCommaJSON() throws {
        let values = try load("json/trailing-comma.json", .json)
        #expect(
            values == [
                "logLevel": .string("debug"), "workers": .integer(8), "tags": .array([.string("a"), .string("b")])
            ])
    }

    /// A `/*` comment that never ends is an error at its start.
    @Test func unterminatedCommentJSON() throws {
        let error = try loadError("broken/unterminated-comment.json", .json)
        #expect(error.message == "unterminated comment: expected '*/', found end of file")
        #expect(error.line == 3)
        #expect(error.column == 3)
    }

    @Test func wrongTypesJSONParsesButConvertsToNothing() throws {
        let values = try load("broken/wrong-types.json", .json)
        #expect(values.count == 9)
        #expect(URL(defaultsValue: values["endpoint"]!) == nil)
        #expect(Date(defaultsValue: values["lastReload"]!) == nil)
        #expect(String(defaultsValue: values["logLevel"]!) == nil)
        #expect(Double(defaultsValue: values["ratio"]!) == nil)
        #expect([String](defaultsValue: values["recentFiles"]!) == nil)
        #expect(Data(defaultsValue: values["signature"]!) == nil)
        #expect(Bool(defaultsValue: values["verbose"]!) == nil)
        #expect([String: String](defaultsValue: values["window"]!) == nil)
        #expect(Int(defaultsValue: values["workers"]!) == nil)
    }

    @Test func brokenPropertyList() throws {
        let error = try loadError("broken/broken.plist", .propertyList)
        #expect(error.kind == .malformedFile)
        #expect((error.line, error.column) == (8, 11))
        #expect(error.message.hasPrefix("expected a digit in <integer>, found 'eight'"))
    }
}
