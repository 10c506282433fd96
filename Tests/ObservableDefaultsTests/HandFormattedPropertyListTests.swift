import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A write by the library changes only the members it changes in an XML property list a person wrote
/// (issue 32), as it does in JSON: every kind of write, on files laid out by hand, compared byte for byte
/// with the text expected; and a seeded fuzz test of ``PropertyListXMLSuiteEditor``.
@Suite struct HandFormattedPropertyListTests {
    let directory = TemporaryDirectory()

    private static let prolog = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        """

    /// A suite on a new file holding `bytes`.
    private func suite(_ name: String, _ bytes: [UInt8]) throws -> DefaultsSuite {
        let file = directory.file("\(name).plist")
        try Data(bytes).write(to: file)
        return try DefaultsSuite(fileURL: file)
    }

    private func bytes(_ suite: DefaultsSuite) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: suite.fileURL))
    }

    private func text(_ suite: DefaultsSuite) throws -> String {
        String(decoding: try bytes(suite), as: UTF8.self)
    }

    /// Four spaces, comments between members, unsorted keys, a nested dictionary and array: `set` of an
    /// existing key replaces its value element only, a new key goes after the last member in the file's
    /// indentation, `removeObject` takes the member's lines and the comment ending its line.
    @Test func setAndRemoveKeepAFourSpaceCommentedFile() throws {
        let original =
            Self.prolog + """

                <!-- Settings for the daemon. -->
                <plist version="1.0">
                    <dict>
                        <!-- The level: debug, info or error. -->
                        <key>logLevel</key>
                        <string>debug</string>
                        <key>workers</key> <integer>4</integer> <!-- one per core -->
                        <key>limits</key>
                        <dict>
                            <key>cpu</key>
                            <real>5.0</real>
                        </dict>
                        <key>tags</key>
                        <array>
                            <string>a</string> <!-- first -->
                            <string>caf&#xE9;</string>
                        </array>
                        <key>alpha</key>
                        <true/>
                    </dict>
                </plist>

                """
        let suite = try suite("four-spaces", Array(original.utf8))
        #expect(suite.integer(forKey: "workers") == 4)

        suite.set(8, forKey: "workers")
        var expected = original.replacingOccurrences(of: "<integer>4</integer>", with: "<integer>8</integer>")
        #expect(try text(suite) == expected)

        suite.set(DefaultsValue.dictionary(["cpu": .double(2.5), "memory": .string("1G")]), forKey: "limits")
        expected = expected.replacingOccurrences(
            of: """
                    <dict>
                            <key>cpu</key>
                            <real>5.0</real>
                        </dict>
                """,
            with: """
                    <dict>
                            <key>cpu</key>
                            <real>2.5</real>
                            <key>memory</key>
                            <string>1G</string>
                        </dict>
                """)
        #expect(try text(suite) == expected)

        suite.set(DefaultsValue.array([.string("x"), .string("y")]), forKey: "new")
        expected = expected.replacingOccurrences(
            of: "        <true/>\n",
            with:
                "        <true/>\n        <key>new</key>\n        <array>\n            <string>x</string>\n            <string>y</string>\n        </array>\n"
        )
        #expect(try text(suite) == expected)

        suite.removeObject(forKey: "workers")
        expected = expected.replacingOccurrences(
            of: "        <key>workers</key> <integer>8</integer> <!-- one per core -->\n", with: "")
        #expect(try text(suite) == expected)
        #expect(expected.contains("<real>2.5</real>") && expected.contains("<!-- Settings for the daemon. -->"))
        #expect(suite.string(forKey: "logLevel") == "debug")
        #expect(suite.stringArray(forKey: "tags") == ["a", "café"])
    }

    /// Tabs, CRLF line breaks and a byte-order mark in a file with sorted keys: a new key goes to its
    /// sorted place, above the comment line right above the member after it; `performBatchUpdates` and
    /// `update(forKey:)` change only their members; the BOM and every CRLF stay.
    @Test func sortedTabbedFileWithCRLFAndByteOrderMark() throws {
        let lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<plist version=\"1.0\">",
            "<dict>",
            "\t<key>alpha</key>",
            "\t<integer>1</integer>",
            "\t<!-- About gamma. -->",
            "\t<key>gamma</key>",
            "\t<string>three</string>",
            "\t<key>omega</key>",
            "\t<date>2024-01-02T03:04:05Z</date>",
            "</dict>",
            "</plist>",
            ""
        ]
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        func file(_ lines: [String]) -> [UInt8] { bom + Array(lines.joined(separator: "\r\n").utf8) }
        let suite = try suite("crlf-bom", file(lines))

        suite.set(2, forKey: "beta")
        var expected = lines
        expected.insert(contentsOf: ["\t<key>beta</key>", "\t<integer>2</integer>"], at: 5)
        #expect(try bytes(suite) == file(expected))

        try suite.update(forKey: "alpha") { value in
            if case .integer(let number)? = value { return .integer(number + 10) }
            return value
        }
        expected[4] = "\t<integer>11</integer>"
        #expect(try bytes(suite) == file(expected))

        suite.performBatchUpdates {
            suite.set(DefaultsValue.array([.bool(false)]), forKey: "zulu")
            suite.removeObject(forKey: "gamma")
            suite.set(DefaultsValue.data(Data([1, 2, 3])), forKey: "delta")
        }
        expected.remove(at: 9)
        expected.remove(at: 8)
        expected.insert(contentsOf: ["\t<key>delta</key>", "\t<data>AQID</data>"], at: 7)
        expected.insert(contentsOf: ["\t<key>zulu</key>", "\t<array>", "\t\t<false/>", "\t</array>"], at: 12)
        #expect(try bytes(suite) == file(expected))
        #expect(suite.integer(forKey: "alpha") == 11 && suite.object(forKey: "gamma") == nil)
    }

    /// A dictionary on one line stays on one line; removing its last member leaves `<dict/>`, and a new
    /// key opens it again in the file's indentation.
    @Test func oneLineDictionaryAndEmptyDictionary() throws {
        let original = "<plist><dict><key>b</key><integer>2</integer> <key>a</key><string>x</string></dict></plist>\n"
        let suite = try suite("one-line", Array(original.utf8))
        suite.set("y", forKey: "c")
        #expect(
            try text(suite)
                == "<plist><dict><key>b</key><integer>2</integer> <key>a</key><string>x</string> <key>c</key><string>y</string></dict></plist>\n"
        )
        suite.removeObject(forKey: "a")
        #expect(
            try text(suite)
                == "<plist><dict><key>b</key><integer>2</integer> <key>c</key><string>y</string></dict></plist>\n")
        suite.performBatchUpdates {
            suite.removeObject(forKey: "b")
            suite.removeObject(forKey: "c")
        }
        #expect(try text(suite) == "<plist><dict/></plist>\n")
        suite.set(1, forKey: "k")
        #expect(try text(suite) == "<plist><dict>\n\t<key>k</key>\n\t<integer>1</integer>\n</dict></plist>\n")
    }

    /// Files the library writes come out byte for byte as a full rewrite makes them, through every
    /// change: new keys at their sorted places, replaced and removed members, `<dict/>` when empty.
    @Test func libraryLayoutIsUnchanged() throws {
        let suite = try DefaultsSuite(name: "library-layout-plist", directory: directory.url, format: .propertyList)
        var values: [String: DefaultsValue] = [:]
        func check(_ note: String) throws {
            #expect(try bytes(suite) == [UInt8](PropertyListWriter.encodeSuite(values)), "\(note)")
        }
        let steps: [(String, DefaultsValue?)] = [
            ("m", .integer(1)), ("b", .string("two")), ("z", .array([.integer(1), .dictionary(["q": .bool(true)])])),
            ("a", .dictionary([:])), ("m", .double(2.5)), ("b", nil), ("zz", .date(Date(timeIntervalSince1970: 0))),
            ("a", nil), ("m", nil), ("z", nil), ("zz", nil), ("k", .data(Data([0xFF])))
        ]
        for (key, value) in steps {
            if let value {
                suite.set(value, forKey: key)
                values[key] = value
            } else {
                suite.removeObject(forKey: key)
                values.removeValue(forKey: key)
            }
            try check("after \(key)")
        }
    }

    /// A removal right after a write that made the file whole (a new file, several keys at once) finds the
    /// member: the first write's layout is the library's, and so is the edit's.
    @Test func removalAfterTheFirstWrite() throws {
        let suite = try DefaultsSuite(name: "first-write-plist", directory: directory.url, format: .propertyList)
        suite.performBatchUpdates {
            suite.set(1, forKey: "a")
            suite.set(2, forKey: "b")
        }
        suite.removeObject(forKey: "a")
        #expect(try bytes(suite) == [UInt8](PropertyListWriter.encodeSuite(["b": .integer(2)])))
        #expect(suite.object(forKey: "a") == nil)
    }

    /// UTF-16 files and binary property lists have no layout the editor keeps: a write rewrites them
    /// whole, as UTF-8 XML holding every key.
    @Test func utf16AndBinaryFilesAreRewrittenWhole() throws {
        let xml =
            Self.prolog
            + "\n<plist version=\"1.0\">\n<dict>\n  <key>b</key>\n  <integer>2</integer>\n</dict>\n</plist>\n"
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in xml.replacingOccurrences(of: "UTF-8", with: "UTF-16").utf16 {
            utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["b": 2], format: .binary, options: 0)
        for (name, original) in [("utf16", utf16), ("binary", [UInt8](binary))] {
            let suite = try suite(name, original)
            suite.set(1, forKey: "a")
            #expect(
                try bytes(suite)
                    == [UInt8](PropertyListWriter.encodeSuite(["a": .integer(1), "b": .integer(2)])), "\(name)")
        }
    }

    // MARK: Fuzz

    /// Random hand-formatted property lists and random edit sequences: after each edit the file parses to
    /// exactly what a full rewrite would hold, the editor's members are where a scan finds them, and the
    /// members, comments and bytes around the dictionary that the edit did not touch are unchanged.
    @Test func randomEditsOfRandomDocuments() throws {
        var random = SeededGenerator(seed: 0x5eed_3233)
        for documentNumber in 0..<300 {
            var document = HandFormattedPropertyList.random(using: &random)
            var values = try #require(
                try? PropertyListXMLReader.parseSuite(Data(document.bytes)), "document \(documentNumber)")
            #expect(values == document.values, "the reader reads document \(documentNumber) as it was written")
            for step in 0..<6 {
                let changes = HandFormattedPropertyList.randomChanges(using: &random)
                let before = document.bytes
                var editor = try #require(
                    PropertyListXMLSuiteEditor(bytes: before, members: step % 2 == 0 ? nil : document.members),
                    "document \(documentNumber)")
                editor.apply(changes)
                for (key, value) in changes { values[key] = value }
                let context =
                    "document \(documentNumber), step \(step): \(changes)\n\(String(decoding: before, as: UTF8.self))\n→\n\(String(decoding: editor.bytes, as: UTF8.self))"
                let after = editor.bytes
                let parsed = try? PropertyListXMLReader.parseSuite(Data(after))
                #expect(parsed == values, "parses to the full rewrite's contents — \(context)")
                let rewrite = try PropertyListXMLReader.parseSuite(
                    PropertyListWriter.encodeSuite(values.reduce(into: [:]) { $0[$1.key.string] = $1.value }))
                #expect(parsed == rewrite, "\(context)")
                let scanned = after.withUnsafeBufferPointer { PropertyListXMLReader.scanEditableSuite($0) }
                #expect(scanned?.members == editor.members, "members — \(context)")
                let changed = Set(changes.map(\.key))
                #expect(
                    untouchedMembers(of: before, except: changed) == untouchedMembers(of: after, except: changed),
                    "untouched members — \(context)")
                #expect(after.starts(with: document.prefix), "what stands before the dictionary — \(context)")
                #expect(after.reversed().starts(with: document.suffix.reversed()), "what follows it — \(context)")
                document.bytes = after
                document.members = editor.members
            }
        }
    }

    /// The text of each member whose key is not in `changed`, in file order.
    private func untouchedMembers(of bytes: [UInt8], except changed: Set<ExactKey>) -> [String] {
        bytes.withUnsafeBufferPointer { buffer in
            (PropertyListXMLReader.scanEditableSuite(buffer)?.members ?? []).compactMap { member in
                guard let key = PropertyListXMLReader.key(in: buffer, at: member.key.lowerBound),
                    !changed.contains(ExactKey(key))
                else { return nil }
                return String(decoding: buffer[member.key.lowerBound..<member.value.upperBound], as: UTF8.self)
            }
        }
    }
}

/// An XML property list as a person might lay it out: LF or CRLF, tabs, two or four spaces or none, a
/// byte-order mark, comments before, between and after members, keys sorted or not, key and value on one
/// line or two, entities and CDATA, nested dictionaries and arrays, `<dict/>`.
struct HandFormattedPropertyList {
    var bytes: [UInt8]
    var values: [ExactKey: DefaultsValue]
    var members: [SuiteIndex.Member]?
    /// The bytes before the top-level `<dict` and after the `</plist>`, which no edit changes.
    var prefix: [UInt8]
    var suffix: [UInt8]

    static let keys = ["a", "b", "zeta", "alpha", "caf\u{E9}", "x<y", "x y", "\u{E9}2", "\u{1F600}", "m&n"]

    static func random(using random: inout SeededGenerator) -> HandFormattedPropertyList {
        let newline = Bool.random(using: &random) ? "\n" : "\r\n"
        let unit = ["\t", "  ", "    ", ""].randomElement(using: &random)!
        let comments = Bool.random(using: &random)
        let sameLine = random.next() % 4 == 0
        var prefix = Bool.random(using: &random) ? "\u{FEFF}" : ""
        prefix += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + newline
        if comments { prefix += "<!-- settings -->" + newline }
        prefix += "<plist version=\"1.0\">" + newline
        var keysInOrder = Array(keys.shuffled(using: &random).prefix(Int.random(in: 0...7, using: &random)))
        if Bool.random(using: &random) { keysInOrder.sort { ExactKey($0) < ExactKey($1) } }
        var text = ""
        var values: [ExactKey: DefaultsValue] = [:]
        if keysInOrder.isEmpty && Bool.random(using: &random) {
            text += "<dict/>"
        } else {
            text += "<dict>"
            for key in keysInOrder {
                text += newline + unit
                if comments && random.next() % 4 == 0 { text += "<!-- about \(key.count) -->" + newline + unit }
                text += "<key>" + escaped(key, using: &random) + "</key>"
                text += sameLine ? " " : newline + unit
                let (valueText, value) = Self.value(depth: 1, newline: newline, unit: unit, using: &random)
                text += valueText
                values[ExactKey(key)] = value
                if comments && random.next() % 4 == 0 { text += " <!-- note -->" }
            }
            text += newline + "</dict>"
        }
        let suffix = newline + "</plist>" + (Bool.random(using: &random) ? newline : "")
        text = prefix + text + suffix
        return HandFormattedPropertyList(
            bytes: Array(text.utf8), values: values, members: nil, prefix: Array(prefix.utf8) + Array("<dict".utf8),
            suffix: Array(suffix.utf8))
    }

    /// One to twelve changes: new values for existing or new keys, or removals.
    static func randomChanges(using random: inout SeededGenerator) -> [(key: ExactKey, value: DefaultsValue?)] {
        var changes: [ExactKey: DefaultsValue?] = [:]
        for _ in 0..<Int.random(in: 1...(random.next() % 4 == 0 ? 12 : 3), using: &random) {
            let key = ExactKey(keys.randomElement(using: &random)!)
            changes[key] =
                random.next() % 3 == 0
                ? .some(nil) : .some(value(depth: 1, newline: "\n", unit: "\t", using: &random).value)
        }
        return changes.map { ($0.key, $0.value) }.sorted { $0.key < $1.key }
    }

    /// The key's text with `&`, `<` written as entities or character references, or in CDATA.
    private static func escaped(_ key: String, using random: inout SeededGenerator) -> String {
        if key.contains("<") || key.contains("&"), random.next() % 3 == 0 { return "<![CDATA[\(key)]]>" }
        let references = Bool.random(using: &random)
        return key.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "&": return "&amp;"
            case "<": return "&lt;"
            case _ where scalar.value >= 0x80 && references: return "&#x\(String(scalar.value, radix: 16));"
            default: return String(scalar)
            }
        }.joined()
    }

    private static func value(depth: Int, newline: String, unit: String, using random: inout SeededGenerator) -> (
        text: String, value: DefaultsValue
    ) {
        let indentation = String(repeating: unit, count: depth)
        switch Int.random(in: 0...(depth > 2 ? 5 : 7), using: &random) {
        case 0:
            let number = Int.random(in: -1000...1000, using: &random)
            return ("<integer>\(number)</integer>", .integer(number))
        case 1:
            return [
                ("<real>5.0</real>", .double(5)), ("<real>1e3</real>", .double(1000)),
                ("<real>-0.5</real>", .double(-0.5))
            ]
            .randomElement(using: &random)!
        case 2: return ("<string>tab\there &amp; &#xE9;</string>", .string("tab\there & \u{E9}"))
        case 3: return ("<string><![CDATA[<!-- not a comment -->]]></string>", .string("<!-- not a comment -->"))
        case 4:
            let flag = Bool.random(using: &random)
            return (flag ? "<true/>" : "<false/>", .bool(flag))
        case 5: return ("<date>2024-05-06T07:08:09Z</date>", .date(Date(timeIntervalSince1970: 1_714_979_289)))
        case 6:
            var items: [DefaultsValue] = []
            var text = "<array>"
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let item = value(depth: depth + 1, newline: newline, unit: unit, using: &random)
                text += newline + indentation + unit + item.text
                items.append(item.value)
            }
            return (items.isEmpty ? "<array/>" : text + newline + indentation + "</array>", .array(items))
        default:
            var entries: [String: DefaultsValue] = [:]
            var text = "<dict>"
            for key in ["p", "q"].prefix(Int.random(in: 0...2, using: &random)) {
                let item = value(depth: depth + 1, newline: newline, unit: unit, using: &random)
                text += newline + indentation + unit + "<key>\(key)</key>" + newline + indentation + unit + item.text
                entries[key] = item.value
            }
            return (entries.isEmpty ? "<dict/>" : text + newline + indentation + "</dict>", .dictionary(entries))
        }
    }
}
