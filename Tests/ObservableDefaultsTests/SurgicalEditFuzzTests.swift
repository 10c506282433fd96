import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Random hand-formatted JSON suite files and random edit sequences (issue 32): after each edit the file
/// parses to exactly what a full rewrite would hold, the editor's members are where a scan finds them,
/// and the members, comments and bytes around the object that the edit did not touch are unchanged.
@Suite struct SurgicalEditFuzzTests {
    /// Edits straight on ``JSONSuiteEditor``: many documents, several edits each.
    @Test func randomEditsOfRandomDocuments() throws {
        var random = SeededGenerator(seed: 0x5eed_3232)
        for documentNumber in 0..<400 {
            var document = HandFormattedDocument.random(using: &random)
            var values = try #require(
                try? JSONReader.parseSuite(Data(document.bytes), fileURL: nil), "document \(documentNumber)")
            #expect(values == document.values, "the reader reads document \(documentNumber) as it was written")
            for step in 0..<6 {
                let changes = HandFormattedDocument.randomChanges(of: values, using: &random)
                let before = document.bytes
                var editor = try #require(
                    JSONSuiteEditor(bytes: before, members: nil, spellings: JSONNumberSpellings()),
                    "document \(documentNumber)")
                editor.apply(changes)
                for (key, value) in changes { values[key] = value }
                let context =
                    "document \(documentNumber), step \(step): \(changes)\n\(String(decoding: before, as: UTF8.self))\n→\n\(String(decoding: editor.bytes, as: UTF8.self))"
                try check(editor, before: before, values: values, changed: Set(changes.map(\.key)), document, context)
                document.bytes = editor.bytes
            }
        }
    }

    /// The same through the write path of a suite: `set` and `removeObject` on a file a person wrote.
    @Test func randomEditsThroughASuite() throws {
        let directory = TemporaryDirectory()
        var random = SeededGenerator(seed: 0x3232_5eed)
        for documentNumber in 0..<25 {
            let document = HandFormattedDocument.random(using: &random)
            let file = directory.file("fuzz-\(documentNumber).json")
            try Data(document.bytes).write(to: file)
            let suite = try DefaultsSuite(fileURL: file)
            var values = document.values
            for step in 0..<5 {
                let changes = HandFormattedDocument.randomChanges(of: values, using: &random)
                let before = [UInt8](try Data(contentsOf: file))
                suite.performBatchUpdates {
                    for (key, value) in changes { suite.set(value, forKey: key.string) }
                }
                for (key, value) in changes { values[key] = value }
                let after = [UInt8](try Data(contentsOf: file))
                let context =
                    "suite \(documentNumber), step \(step): \(changes)\n\(String(decoding: before, as: UTF8.self))\n→\n\(String(decoding: after, as: UTF8.self))"
                #expect(try SuiteFormat.json.decode(Data(after), fileURL: file) == values, "\(context)")
                #expect(suite.storage.storedValues == values, "\(context)")
                let changed = Set(changes.map(\.key))
                #expect(
                    untouchedMembers(of: before, except: changed) == untouchedMembers(of: after, except: changed),
                    "\(context)")
            }
        }
    }

    private func check(
        _ editor: JSONSuiteEditor, before: [UInt8], values: [ExactKey: DefaultsValue], changed: Set<ExactKey>,
        _ document: HandFormattedDocument, _ context: String
    ) throws {
        let after = editor.bytes
        let parsed = try? JSONReader.parseSuite(Data(after), fileURL: nil)
        #expect(parsed == values, "parses to the full rewrite's contents — \(context)")
        let fullRewrite = try JSONReader.parseSuite(Data(JSONWriter.encodeSuite(values.stringKeyed)), fileURL: nil)
        #expect(parsed == fullRewrite, "\(context)")
        #expect(after.withUnsafeBufferPointer { JSONSuiteIndex.scan($0) } == editor.members, "members — \(context)")
        #expect(
            untouchedMembers(of: before, except: changed) == untouchedMembers(of: after, except: changed),
            "untouched members — \(context)")
        #expect(after.starts(with: document.prefix), "what stands before the object — \(context)")
        #expect(after.reversed().starts(with: document.suffix.reversed()), "what follows it — \(context)")
    }

    /// The text of each member whose key is not in `changed`, in file order.
    private func untouchedMembers(of bytes: [UInt8], except changed: Set<ExactKey>) -> [String] {
        bytes.withUnsafeBufferPointer { buffer in
            (JSONSuiteIndex.scan(buffer) ?? []).compactMap { member in
                guard let key = JSONReader.string(in: buffer, at: member.key), !changed.contains(ExactKey(key))
                else { return nil }
                return String(decoding: buffer[member.key.lowerBound..<member.value.upperBound], as: UTF8.self)
            }
        }
    }
}

/// A JSON suite file as a person might lay it out: a line break (LF or CRLF), an indentation (tabs, two
/// or four spaces, none), one line or one member per line, colon spacing, comments before and inside the
/// object, inside arrays and after it, trailing commas, escaped keys and strings, numbers spelled
/// `5.0` or `1e3`, `null` members and keys written twice.
struct HandFormattedDocument {
    var bytes: [UInt8]
    /// What a reader must find in it.
    var values: [ExactKey: DefaultsValue]
    /// The bytes before the object's `{` and after its `}`, which no edit changes.
    var prefix: [UInt8]
    var suffix: [UInt8]

    static let keys = ["a", "b", "zeta", "alpha", "caf\u{E9}", "k\"q", "x y", "\u{E9}2", "\u{1F600}", "m/n"]

    static func random(using random: inout SeededGenerator) -> HandFormattedDocument {
        let newline = Bool.random(using: &random) ? "\n" : "\r\n"
        let unit = ["\t", "  ", "    ", ""].randomElement(using: &random)!
        let oneLine = random.next() % 4 == 0
        let colon = [":", ": ", " : "].randomElement(using: &random)!
        let comments = Bool.random(using: &random)
        var writer = Writer(newline: newline, oneLine: oneLine, comments: comments)

        var prefix = Bool.random(using: &random) ? "\u{FEFF}" : ""
        if comments && Bool.random(using: &random) { prefix += "// settings" + newline }
        if comments && Bool.random(using: &random) { prefix += "/* by hand */ " }
        var text = prefix + "{"
        var values: [ExactKey: DefaultsValue] = [:]
        let count = Int.random(in: 0...7, using: &random)
        var keysInOrder = Array(keys.shuffled(using: &random).prefix(count))
        if Bool.random(using: &random) { keysInOrder.sort { ExactKey($0) < ExactKey($1) } }
        if count > 1 && random.next() % 5 == 0 { keysInOrder.append(keysInOrder[0]) }
        let trailingComma = Bool.random(using: &random)
        for (position, key) in keysInOrder.enumerated() {
            text += oneLine ? (position == 0 ? "" : " ") : newline + unit
            if comments && random.next() % 4 == 0 { text += writer.comment(using: &random, lineAllowed: !oneLine) }
            let isNull = random.next() % 10 == 0
            text += escapedKey(key, using: &random) + colon
            if comments && random.next() % 5 == 0 { text += "/* c */ " }
            if isNull {
                text += "null"
                values.removeValue(forKey: ExactKey(key))
            } else {
                let (valueText, value) = writer.value(depth: 0, unit: unit, using: &random)
                text += valueText
                values[ExactKey(key)] = value
            }
            if position < keysInOrder.count - 1 || trailingComma { text += "," }
            if comments && random.next() % 4 == 0 {
                text += " " + writer.comment(using: &random, lineAllowed: !oneLine)
            }
        }
        if !keysInOrder.isEmpty && !oneLine { text += newline }
        if comments && random.next() % 6 == 0 { text += "/* inside */" }
        text += "}"
        var suffix = ""
        if comments && Bool.random(using: &random) { suffix += " // the end" }
        if Bool.random(using: &random) { suffix += newline }
        text += suffix
        return HandFormattedDocument(
            bytes: Array(text.utf8), values: values, prefix: Array(prefix.utf8) + [UInt8(ascii: "{")],
            suffix: [UInt8(ascii: "}")] + Array(suffix.utf8))
    }

    /// One to three changes: new values for existing or new keys, or removals.
    static func randomChanges(of values: [ExactKey: DefaultsValue], using random: inout SeededGenerator) -> [(
        key: ExactKey, value: DefaultsValue?
    )] {
        var changes: [ExactKey: DefaultsValue?] = [:]
        for _ in 0..<Int.random(in: 1...(random.next() % 4 == 0 ? 12 : 3), using: &random) {
            let key = ExactKey(keys.randomElement(using: &random)!)
            if random.next() % 3 == 0 {
                changes[key] = .some(nil)
            } else {
                var writer = Writer(newline: "\n", oneLine: false, comments: false)
                changes[key] = .some(writer.value(depth: 0, unit: "  ", using: &random).value)
            }
        }
        return changes.map { ($0.key, $0.value) }.sorted { $0.key < $1.key }
    }

    /// The key's JSON text, its non-ASCII characters sometimes written as `\u` escapes.
    private static func escapedKey(_ key: String, using random: inout SeededGenerator) -> String {
        let escapeUnicode = Bool.random(using: &random)
        var text = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "/" where escapeUnicode: text += "\\/"
            case _ where scalar.value >= 0x80 && escapeUnicode:
                for unit in String(scalar).utf16 { text += "\\u" + String(format: "%04x", unit) }
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// Writes random values and comments in a document's style.
    struct Writer {
        var newline: String
        var oneLine: Bool
        var comments: Bool

        func comment(using random: inout SeededGenerator, lineAllowed: Bool) -> String {
            lineAllowed && Bool.random(using: &random) ? "// note \"quoted\" {" + newline : "/* { \"x\": [ */ "
        }

        mutating func value(depth: Int, unit: String, using random: inout SeededGenerator) -> (
            text: String, value: DefaultsValue
        ) {
            switch Int.random(in: 0...(depth > 1 ? 5 : 7), using: &random) {
            case 0:
                let number = Int.random(in: -1000...1000, using: &random)
                return (String(number), .integer(number))
            case 1:
                return [("5.0", .double(5)), ("1e3", .double(1000)), ("-0.5", .double(-0.5)), ("2.50", .double(2.5))]
                    .randomElement(using: &random)!
            case 2: return ("\"tab\\there \\u00e9\"", .string("tab\there \u{E9}"))
            case 3: return ("\"// not a comment\"", .string("// not a comment"))
            case 4:
                let flag = Bool.random(using: &random)
                return (flag ? "true" : "false", .bool(flag))
            case 5: return ("\"plain\"", .string("plain"))
            case 6:
                var items: [(String, DefaultsValue)] = []
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    items.append(value(depth: depth + 1, unit: unit, using: &random))
                }
                var text = "["
                for (position, item) in items.enumerated() {
                    if comments && random.next() % 4 == 0 { text += "/* i */ " }
                    text += item.0
                    if position < items.count - 1 || (comments && Bool.random(using: &random)) { text += ", " }
                }
                return (text + "]", .array(items.map(\.1)))
            default:
                var entries: [String: DefaultsValue] = [:]
                var text = "{"
                let count = Int.random(in: 0...2, using: &random)
                for position in 0..<count {
                    let key = ["p", "q", "r"][position]
                    let item = value(depth: depth + 1, unit: unit, using: &random)
                    text +=
                        (oneLine ? " " : newline + String(repeating: unit, count: depth + 2)) + "\"\(key)\": " + item.0
                    if position < count - 1 { text += "," }
                    entries[key] = item.1
                }
                if count > 0 && !oneLine { text += newline + String(repeating: unit, count: depth + 1) }
                return (text + "}", .dictionary(entries))
            }
        }
    }
}
