import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The incremental re-read of XML property lists must give exactly what a full parse and a diff give,
/// for any edit, and decline whatever it cannot answer exactly.
@Suite struct PropertyListSuiteIndexTests {
    /// A suite file as text: its prolog, members in order (each key and value element as written), and
    /// the whitespace between them.
    struct Document {
        var prolog: String
        var members: [(key: String, value: String)]
        var separators: [String]
        var trailer: String

        var text: String {
            if members.isEmpty { return prolog + "<dict/>\n</plist>\n" }
            var text = prolog + "<dict>"
            for (position, member) in members.enumerated() {
                let separator = separators[position % separators.count]
                text += separator + member.key + separator + member.value
            }
            return text + "\n</dict>" + trailer
        }
    }

    static let prologs = [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n",
        "<plist version=\"1.0\">",
        "<?xml version=\"1.0\"?>\n<plist>\n"
    ]

    @Test func incrementalRereadEqualsFullParseAndDiff() throws {
        var random = SeededGenerator(seed: 0x9_1157_1DE7)
        var incremental = 0, declined = 0, cases = 0
        for _ in 0..<400 {
            var document = Document(
                prolog: Self.prologs[random.int(0...Self.prologs.count - 1)],
                members: (0..<random.int(0...30)).map { _ in (Self.key(&random), Self.value(&random, depth: 0)) },
                separators: ["\n\t", "\n\t\t", " ", "", "\r\n  "].shuffled(using: &random), trailer: "\n</plist>\n")
            var oldText = document.text
            for _ in 0..<8 {
                let kept = document
                let undo = Self.edit(&document, &random)
                let newText = document.text
                cases += 1
                if try check(old: oldText, new: newText) { incremental += 1 } else { declined += 1 }
                if undo { document = kept } else { oldText = newText }
            }
        }
        // Most edits must take the incremental path, or this test proves little.
        #expect(incremental > cases / 3, "incremental \(incremental), declined \(declined) of \(cases)")
    }

    /// Checks one edit; returns whether the incremental path answered (else the full parse decides).
    func check(old: String, new: String) throws -> Bool {
        let oldBytes = Array(old.utf8), newBytes = Array(new.utf8)
        // The storage keeps only files that parse.
        guard let previous = try? PropertyListReader.parseSuite(Data(oldBytes), fileURL: nil) else { return false }
        let full = try? PropertyListReader.parseSuite(Data(newBytes), fileURL: nil)
        return oldBytes.withUnsafeBufferPointer { oldBuffer in
            newBytes.withUnsafeBufferPointer { newBuffer in
                if let previousMembers = PropertyListXMLSuiteIndex.scan(oldBuffer) {
                    // The scan helped by the previous file finds the same members as a plain scan.
                    let plain = PropertyListXMLSuiteIndex.scan(newBuffer)
                    let helped = PropertyListXMLSuiteIndex.scan(
                        newBuffer, previous: oldBuffer, previousMembers: previousMembers)
                    #expect(helped?.members == plain, "old:\n\(old)\nnew:\n\(new)")
                }
                var values = previous
                var spellings = JSONNumberSpellings()
                guard
                    let reread = SuiteFormat.propertyList.reread(
                        previous: oldBuffer, previousMembers: nil, entries: nil, values: &values, spellings: &spellings,
                        current: newBuffer)
                else {
                    #expect(values == previous, "a declined re-read must leave the values as they were")
                    return false
                }
                guard let full else {
                    Issue.record(
                        "the incremental re-read accepted a file the full parse rejects:\nold:\n\(old)\nnew:\n\(new)")
                    return true
                }
                #expect(values == full, "old:\n\(old)\nnew:\n\(new)")
                #expect(reread.changed.count == Set(reread.changed).count, "a key reported twice")
                #expect(
                    Set(reread.changed) == SuiteStorage.changedKeys(from: previous, to: full),
                    "old:\n\(old)\nnew:\n\(new)")
                #expect(reread.members == PropertyListXMLSuiteIndex.scan(newBuffer))
                return true
            }
        }
    }

    // MARK: Random documents and edits

    /// A key; the special ones are rare, because a document holding one twice is left to Foundation.
    static func key(_ random: inout SeededGenerator) -> String {
        switch random.int(0...79) {
        case 0: return "<key>a</key>"
        case 1: return "<key>&#x61;</key>"  // "a", spelled differently
        case 2: return "<key>caf\u{E9}</key>"
        case 3: return "<key>cafe\u{301}</key>"  // another key by its bytes
        case 4: return "<key></key>"
        case 5: return "<key>a &amp; b</key>"
        default: return "<key>key\(random.int(0...100_000))</key>"
        }
    }

    static func value(_ random: inout SeededGenerator, depth: Int) -> String {
        switch random.int(0...(depth < 3 ? 17 : 14)) {
        case 0: return "<integer>\(random.int(-5...5))</integer>"
        case 1:
            return [
                "<real>1.5</real>", "<real>1</real>", "<real>1.0</real>", "<real>-0.0</real>", "<real>nan</real>",
                "<real>+infinity</real>"
            ][random.int(0...5)]
        case 2: return ["<true/>", "<false/>"][random.int(0...1)]
        case 3: return ["<string/>", "<string></string>"][random.int(0...1)]
        case 4: return "<string>x</string>"
        case 5: return "<string>&#x78;</string>"  // "x", spelled differently
        case 6: return "<string>a &lt; b &gt; c &amp; \u{1F389}</string>"
        case 7: return "<date>2024-05-01T12:30:0\(random.int(0...9))Z</date>"
        case 8: return ["<data>aGVsbG8=</data>", "<data>\n\taGVs\n\tbG8=\n\t</data>"][random.int(0...1)]
        case 9, 10, 11: return "<string>s\(random.int(0...3))</string>"
        case 12: return "<integer>\(random.int(0...3))</integer>"
        case 13: return ["<array/>", "<dict/>"][random.int(0...1)]
        case 14: return "<string>value \(random.int(0...9))</string>"
        case 15, 16:
            return "<array>" + (0..<random.int(0...3)).map { _ in "\n\t\t" + value(&random, depth: depth + 1) }.joined()
                + "</array>"
        default:
            return "<dict>"
                + (0..<random.int(0...3)).map { _ in key(&random) + value(&random, depth: depth + 1) }.joined()
                + "</dict>"
        }
    }

    /// Values the full parse rejects or leaves to Foundation: the incremental path must decline them.
    static let unusual = [
        "<integer>x</integer>", "<integer>99999999999999999999</integer>", "<string>open", "<!-- note --><true/>",
        "<real>1.</real>", "<foo/>", "<string>&bogus;</string>", "<string>&#0;</string>", "<![CDATA[x]]>",
        "<string>cr\r</string>", "<date>2024-05-01</date>", "<integer attr=\"1\">1</integer>", "<array>", "</dict>",
        "<data>!!</data>", "<true>"
    ]

    /// Applies a random edit; returns whether to undo it after the check (a file the storage would not
    /// keep, or one left to Foundation).
    static func edit(_ document: inout Document, _ random: inout SeededGenerator) -> Bool {
        let count = document.members.count
        let choice = random.int(0...13)
        if applyMemberEdit(choice, to: &document.members, &random, key: { key(&$0) }, value: { value(&$0, depth: 0) }) {
            return false
        }
        switch choice {
        case 7:
            document.separators.shuffle(using: &random)
            document.prolog = prologs[random.int(0...prologs.count - 1)]
        case 8 where count > 0:
            // A duplicate key.
            let member = document.members[random.int(0...count - 1)]
            document.members.insert((member.key, value(&random, depth: 0)), at: random.int(0...count))
            return true
        case 9 where count > 0:
            document.members[random.int(0...count - 1)].value = unusual[random.int(0...unusual.count - 1)]
            return true
        case 10 where count > 0:
            document.members[random.int(0...count - 1)].key =
                ["<key>open", "<key>a<b</key>", "<key>&#1;</key>", "<string>k</string>", "<!-- c -->"][
                    random.int(0...4)]
            return true
        case 11:
            // Something between members, or a broken end.
            if random.chance(0.5), count > 0 {
                document.members[random.int(0...count - 1)].key += ["<!-- c -->", "text", "<?pi?>"][random.int(0...2)]
            } else {
                document.trailer =
                    ["\n</plist>", "</plist>x", "", "\n</plist>\n<plist/>", " </plist> \n\n"][random.int(0...4)]
            }
            return true
        case 12:
            document.prolog =
                [
                    "<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist>", "\u{FEFF}<plist>", "<plist><!-- c -->",
                    "bplist00"
                ][random.int(0...3)]
            return true
        default:
            document.members.append((key(&random), value(&random, depth: 0)))
        }
        return false
    }

    // MARK: Layouts

    @Test func membersFromTheWritersFragmentsEqualAScan() throws {
        var entries = SuiteFormat.sortedEntries(of: [
            "b": .string("a < b & c"), "a": .integer(1),
            "nested": .dictionary(["x": .array([.bool(true), .data(Data([1, 2]))])]),
            "empty": .array([]), "d": .date(Date(timeIntervalSince1970: 1_700_000_000)), "r": .double(0.5)
        ])
        let bytes = PropertyListWriter.encodeSuiteBytes(&entries, reusing: nil)
        bytes.withUnsafeBufferPointer { buffer in
            let fromFragments = PropertyListXMLSuiteIndex.members(ofWritten: buffer, entries: entries)
            #expect(fromFragments != nil)
            #expect(fromFragments == PropertyListXMLSuiteIndex.scan(buffer))
        }
    }

    @Test func binaryPropertyListsAndOtherDocumentsAreNotScanned() throws {
        let binary = try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)
        #expect(Array(binary).withUnsafeBufferPointer { PropertyListXMLSuiteIndex.scan($0) } == nil)
        #expect(Array("  \n".utf8).withUnsafeBufferPointer { PropertyListXMLSuiteIndex.scan($0) } == [])
        #expect(
            Array("<plist><array/></plist>".utf8).withUnsafeBufferPointer { PropertyListXMLSuiteIndex.scan($0) } == nil)
    }

    // MARK: Through the storage

    /// A plist suite re-read after hand edits: only the changed keys are announced, memory equals a full
    /// parse; also after the suite's own write, after a switch to a binary property list and back, and
    /// for a broken file (kept values, error reported).
    @Test func plistSuiteRereadsOnlyWhatChanged() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("incremental.plist")
        let suite = try DefaultsSuite(fileURL: file)
        suite.performBatchUpdates {
            for index in 0..<200 { suite.set(.string("value \(index)"), forKey: "key\(index)") }
            suite.set(.double(1), forKey: "ratio")
        }
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }
        var contents = try PropertyListReader.parseSuite(Data(contentsOf: file), fileURL: nil)
        func edit(_ text: String, expecting keys: Set<String>) throws {
            recorder.clear()
            try HandEdit.renameOver(file, text)
            suite.reload()
            let expected = try PropertyListReader.parseSuite(Data(text.utf8), fileURL: nil)
            #expect(Set(SuiteStorage.changedKeys(from: contents, to: expected).map(\.string)) == keys)
            #expect(suite.storage.storedValues == expected)
            #expect(eventually { Set(recorder.changes.flatMap(\.keys)) == keys })
            #expect(Set(recorder.changes.flatMap(\.keys)) == keys)
            contents = expected
        }
        // After our own write (members from the writer's fragments), then after re-reads (scanned ones).
        for round in 0..<3 {
            var text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            text = text.replacingOccurrences(of: "<string>value 17</string>", with: "<string>edited \(round)</string>")
            text = text.replacingOccurrences(
                of: "<string>edited \(round - 1)</string>", with: "<string>edited \(round)</string>")
            text = text.replacingOccurrences(of: "<real>1</real>", with: "<real>1.0</real>")  // same value
            text = text.replacingOccurrences(of: "\t<key>key42</key>\n\t<string>value 42</string>\n", with: "")
            text = text.replacingOccurrences(
                of: "<dict>\n",
                with:
                    "<dict>\n\t<key>added\(round)</key>\n\t<array><integer>1</integer><dict><key>x</key><string>&#xE9;</string></dict></array>\n"
            )
            try edit(text, expecting: round == 0 ? ["key17", "key42", "added0"] : ["key17", "added\(round)"])
        }
        // A nested value changed (in each of the added arrays).
        var text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        text = text.replacingOccurrences(
            of: "<key>x</key><string>&#xE9;</string>", with: "<key>x</key><string>e</string>")
        try edit(text, expecting: ["added0", "added1", "added2"])
        // The same contents as a binary property list, then changed back to XML with one key removed.
        let binary = try PropertyListSerialization.data(
            fromPropertyList: contents.stringKeyed.mapValues(\.foundationObject), format: .binary, options: 0)
        recorder.clear()
        try binary.write(to: file)
        suite.reload()
        #expect(suite.storage.storedValues == contents)
        text = text.replacingOccurrences(of: "\t<key>key99</key>\n\t<string>value 99</string>\n", with: "")
        try edit(text, expecting: ["key99"])
        // A broken file keeps the values and is reported.
        try HandEdit.renameOver(
            file, text.replacingOccurrences(of: "<string>value 5</string>", with: "<string>value 5</strin>"))
        suite.reload()
        #expect(suite.storage.storedValues == contents)
        #expect(suite.storage.fileError?.kind == .malformedFile)
        try edit(
            text.replacingOccurrences(of: "<string>value 6</string>", with: "<integer>6</integer>"), expecting: ["key6"]
        )
        #expect(suite.storage.fileError == nil)
    }
}
