import Foundation
import Testing

/// The plugin's own JSON reader and writer, checked against Foundation's `JSONSerialization`.
@Suite struct PluginJSONTests {
    func parse(_ text: String) -> PluginJSON? { PluginJSON(parsing: Array(text.utf8)) }

    /// What `JSONSerialization` reads from `bytes` (fragments allowed).
    func foundation(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    @Test func readsEveryKindOfValue() throws {
        let value = try #require(
            parse(#" { "a" : [ 1 , -2.5e3 , true , false , null ] , "b" : { } , "c" : [ ] , "d" : "x" } "#))
        #expect(value["a"] == .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]))
        #expect(value["b"] == .object([:]))
        #expect(value["c"] == .array([]))
        #expect(value["d"]?.string == "x")
        #expect(value["a"]?.array?.first?.int == 1)
        #expect(value["missing"] == nil)
        #expect(value["d"]?["nested"] == nil)
    }

    @Test func stringEscapesDecodeAsFoundationDecodesThem() throws {
        let documents = [
            #""plain""#, #""quote \" backslash \\ slash \/""#, #""\b\f\n\r\t""#, #""\u00e9\u0041\u20AC""#,
            #""pair \ud83d\ude00 end""#, "\"raw UTF-8: é € 😀\"", #""\u0000 nul""#, #""""#
        ]
        for document in documents {
            let ours = try #require(parse(document)?.string, "\(document)")
            #expect(ours == (try foundation(Array(document.utf8)) as? String), "\(document)")
        }
    }

    @Test func malformedDocumentsAreRejectedNotCrashedOn() {
        let documents = [
            "", " ", "{", "}", "[", "[1,]", "[1 2]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "01", "-", "1.",
            "1e", "+1", "tru", "nul", "\"unterminated", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\ud800\\u0041\"",
            "\"\\udc00\"", "\"raw\ncontrol\"", "1 2", "{} x", "\"\\", "[\"a\" \"b\"]"
        ]
        for document in documents {
            #expect(parse(document) == nil, "\(document)")
        }
        #expect(PluginJSON(parsing: [0x22, 0xFF, 0x22]) == nil, "invalid UTF-8 in a string")
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(parse(deep) == nil)
        let allowed = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(parse(allowed) != nil)
    }

    @Test func writesWhatFoundationReadsBack() throws {
        let text = "quote \" backslash \\ newline \n tab \t return \r nul \u{0} bell \u{7} unit \u{1F} é 😀 /"
        let value: PluginJSON = .object([
            "b": .array([.number("12"), .bool(true), .bool(false), .null]),
            "a": .string(text),
            "c": .object(["z": .string(""), "y": .number("-3")])
        ])
        let bytes = value.serialized
        let back = try #require(try foundation(bytes) as? [String: Any])
        #expect(back["a"] as? String == text)
        #expect((back["b"] as? [Any])?.count == 4)
        #expect((back["c"] as? [String: Any])?["y"] as? Int == -3)
        #expect(PluginJSON(parsing: bytes) == value)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"a":"#), "members are sorted by key")
    }

    @Test func requiredFieldsMustBePresentAndWellTyped() {
        let location = #"{"fileName":"f","offset":3}"#
        #expect(PluginMessages.Location(json: parse(location))?.offset == 3)
        #expect(PluginMessages.Location(json: parse(#"{"fileName":"f"}"#)) == nil)
        #expect(PluginMessages.Location(json: parse(#"{"fileName":"f","offset":"3"}"#)) == nil)
        #expect(PluginMessages.Location(json: parse(#"{"fileName":"f","offset":3.5}"#)) == nil)
        let syntax = PluginMessages.Syntax(json: parse(#"{"source":"x","location":\#(location)}"#))
        #expect(syntax?.kind == nil && syntax?.source == "x")
        #expect(PluginMessages.Syntax(json: parse(#"{"kind":null,"source":"x","location":\#(location)}"#))?.kind == nil)
        #expect(PluginMessages.Syntax(json: parse(#"{"kind":1,"source":"x","location":\#(location)}"#)) == nil)
    }

    @Test func aMalformedKnownFieldFailsTheMessage() {
        #expect(
            MacroDispatcher.respond(to: Array(#"{"getCapability":{"capability":{"protocolVersion":"7"}}}"#.utf8)) == nil
        )
        #expect(MacroDispatcher.respond(to: Array(#"{"getCapability":[]}"#.utf8)) == nil)
        #expect(MacroDispatcher.respond(to: Array(#"{"expandAttachedMacro":{"macro":{}}}"#.utf8)) == nil)
        #expect(MacroDispatcher.respond(to: Array(#"[]"#.utf8)) == nil)
        #expect(MacroDispatcher.respond(to: Array(#"{"getCapability":{}}"#.utf8)) != nil, "capability is optional")
    }
}
