import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The incremental re-read must give exactly what a full parse and a diff give, for any edit.
@Suite struct JSONSuiteIndexTests {
    /// A suite file as text: members in order, each key and value as written, and the whitespace around them.
    struct Document {
        var members: [(key: String, value: String)]
        var compact: Bool
        var spaces: [String]

        func text(_ random: inout SeededGenerator) -> String {
            if members.isEmpty { return random.chance(0.3) ? "  \n" : "{" + spaces[0] + "}\n" }
            var text = random.chance(0.1) ? "\u{FEFF}{" : "{"
            for (position, member) in members.enumerated() {
                let space = spaces[position % spaces.count]
                text += (position == 0 ? "" : ",") + (compact ? space : "\n  ") + member.key
                text += (compact ? space + ":" + space : ": ") + member.value
            }
            return text + (compact ? "}" : "\n}\n")
        }
    }

    @Test func incrementalRereadEqualsFullParseAndDiff() throws {
        var random = SeededGenerator(seed: 0x5EED_0F_CAFE)
        var incremental = 0, fallbacks = 0, cases = 0
        for _ in 0..<400 {
            var document = Document(
                members: (0..<random.int(0...30)).map { _ in (Self.key(&random), Self.value(&random, depth: 0)) },
                compact: random.chance(0.3), spaces: ["", " ", "\t", "\r\n "])
            var oldText = document.text(&random)
            for _ in 0..<8 {
                // A broken file, duplicate keys or a `null` are checked, then undone: the storage's previous
                // file has one member per key, else it parses the whole file.
                let kept = document
                let broken = Self.edit(&document, &random)
                let newText = document.text(&random)
                cases += 1
                switch try check(old: oldText, new: newText) {
                case true: incremental += 1
                case false: fallbacks += 1
                }
                if broken { document = kept } else { oldText = newText }
            }
        }
        // Many edits must take the incremental path, or this test proves little (about half do; the rest are
        // the broken files, duplicate keys and `null`s the incremental path must decline).
        #expect(incremental > cases / 3, "incremental \(incremental), fallbacks \(fallbacks) of \(cases)")
    }

    /// Checks one edit; returns whether the incremental path answered (else the full parse decides).
    func check(old: String, new: String) throws -> Bool {
        let oldBytes = Array(old.utf8), newBytes = Array(new.utf8)
        // The storage keeps only files that parse, with one member per key.
        var spellings = JSONNumberSpellings(), fullSpellings = JSONNumberSpellings()
        guard let previous = try? JSONReader.parseSuite(Data(oldBytes), fileURL: nil, spellings: &spellings) else {
            return false
        }
        let full: [ExactKey: DefaultsValue]? = try? JSONReader.parseSuite(
            Data(newBytes), fileURL: nil, spellings: &fullSpellings)
        return oldBytes.withUnsafeBufferPointer { oldBuffer in
            newBytes.withUnsafeBufferPointer { newBuffer in
                guard let previousMembers = JSONSuiteIndex.scan(oldBuffer) else {
                    Issue.record("a file that parses does not scan:\n\(old)")
                    return false
                }
                guard previousMembers.count == previous.count else { return false }
                // The scan helped by the previous file finds the same members as a plain scan.
                let plain = JSONSuiteIndex.scan(newBuffer)
                let helped = JSONSuiteIndex.scan(newBuffer, previous: oldBuffer, previousMembers: previousMembers)
                #expect(helped?.members == plain, "old:\n\(old)\nnew:\n\(new)")
                var values = previous
                guard let scan = helped,
                    let changed = JSONSuiteIndex.reread(
                        previousBytes: oldBuffer, previousMembers: previousMembers, values: &values,
                        spellings: &spellings,
                        newBytes: newBuffer, newMembers: scan.members,
                        sameAtStart: scan.sameAtStart, sameAtEnd: scan.sameAtEnd)
                else {
                    #expect(values == previous, "a declined re-read must leave the values as they were")
                    return false
                }
                guard let full else {
                    Issue.record("the incremental re-read accepted a file the parser rejects:\n\(new)")
                    return true
                }
                #expect(values == full, "old:\n\(old)\nnew:\n\(new)")
                #expect(
                    spellings == fullSpellings, "number spellings differ from a full parse; old:\n\(old)\nnew:\n\(new)")
                #expect(changed.count == Set(changed).count, "a key reported twice")
                #expect(
                    Set(changed) == SuiteStorage.changedKeys(from: previous, to: full), "old:\n\(old)\nnew:\n\(new)")
                return true
            }
        }
    }

    // MARK: Random documents and edits

    static func key(_ random: inout SeededGenerator) -> String {
        let plain = ["a", "b", "theme", "window.width", "é", "🎉", ""]
        switch random.int(0...29) {
        case 0: return #""tab\there""#
        case 1: return #""quote\"d""#
        case 2: return #""\u0061""#  // "a", spelled differently
        case 3: return #""back\\slash""#
        case 4: return "\"" + plain[random.int(0...plain.count - 1)] + "\""
        default: return "\"key\(random.int(0...100_000))\""
        }
    }

    static func value(_ random: inout SeededGenerator, depth: Int) -> String {
        switch random.int(0...(depth < 3 ? 13 : 11)) {
        case 0: return String(random.int(-5...5))
        case 1:
            return ["1.0", "1.00", "1e0", "-0.0", "0", "9223372036854775808", "-9223372036854775808"][random.int(0...6)]
        case 2: return ["true", "false"][random.int(0...1)]
        case 3: return ["NaN", "Infinity", "-Infinity"][random.int(0...2)]
        case 4: return "0"
        case 5: return #""line\nbreak \u00e9 \ud83c\udf89 \/ \\ \"""#
        case 6: return #""x""#
        case 7: return #""\u0078""#  // "x", spelled differently
        case 8: return "\"value \(random.int(0...9))\""
        case 9, 10, 11: return "\"s\(random.int(0...3))\""
        case 12:
            return "["
                + (0..<random.int(0...3)).map { _ in value(&random, depth: depth + 1) }.joined(
                    separator: random.chance(0.5) ? "," : " , ") + "]"
        default:
            return "{"
                + (0..<random.int(0...3)).map { _ in key(&random) + ":" + value(&random, depth: depth + 1) }.joined(
                    separator: ", ") + "}"
        }
    }

    /// Broken files: the full parse rejects them, and so must the incremental re-read (by declining).
    static let breakages = [
        "", "\"unterminated", "tru", "truex", "01", "[1,]", "{\"a\" 1}", "[1}", "\"\u{01}\"", "1.", "nul", "[null]"
    ]

    /// Applies a random edit; returns whether it is one to undo after the check (a broken file, a
    /// duplicate key, a `null`).
    static func edit(_ document: inout Document, _ random: inout SeededGenerator) -> Bool {
        let count = document.members.count
        let choice = random.int(0...11)
        if applyMemberEdit(choice, to: &document.members, &random, key: { key(&$0) }, value: { value(&$0, depth: 0) }) {
            return false
        }
        switch choice {
        case 7:
            document.compact.toggle()
            document.spaces.shuffle(using: &random)
        case 8 where count > 0:
            // The same key and value, spelled differently.
            let position = random.int(0...count - 1)
            document.members[position].key = document.members[position].key.replacingOccurrences(
                of: "\"a\"", with: #""\u0061""#)
            document.members[position].value = document.members[position].value.replacingOccurrences(
                of: "1.0", with: "1.00")
        case 9 where count > 0:
            // A duplicate key: the last one wins.
            let member = document.members[random.int(0...count - 1)]
            document.members.insert(
                (member.key, random.chance(0.3) ? "null" : value(&random, depth: 0)), at: random.int(0...count))
            return true
        case 10 where count > 0 && random.chance(0.5):
            if random.chance(0.3) {
                document.members[random.int(0...count - 1)].value = "null"
                return true
            }
            document.members[random.int(0...count - 1)].value = breakages[random.int(0...breakages.count - 1)]
            return true
        case 11 where count > 0 && random.chance(0.3):
            document.members[random.int(0...count - 1)].key =
                ["\"open", "x", "\"bad\\q\"", "\"\u{01}\""][random.int(0...3)]
            return true
        default:
            document.members.append((key(&random), value(&random, depth: 0)))
        }
        return false
    }

    @Test func suiteRereadsOnlyWhatChangedAfterItsOwnWriteAndAfterARead() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("incremental.json")
        let suite = try DefaultsSuite(fileURL: file)
        suite.performBatchUpdates {
            for index in 0..<200 { suite.set(.string("value \(index)"), forKey: "key\(index)") }
            suite.set(.double(1), forKey: "ratio")
        }
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }
        var contents = try JSONReader.parseSuite(Data(contentsOf: file), fileURL: nil)
        // After our own write (members from the writer's fragments), then after a re-read (scanned ones).
        for round in 0..<3 {
            recorder.clear()
            var text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            text = text.replacingOccurrences(of: "\"value 17\"", with: "\"edited \(round)\"")
            text = text.replacingOccurrences(of: "\"ratio\": 1.0", with: "\"ratio\": 1.00")  // same value
            text = text.replacingOccurrences(of: "\"key42\": \"value 42\",\n", with: "")
            text = text.replacingOccurrences(of: "{\n", with: "{\n  \"added\(round)\": [1, {\"x\": \"\\u00e9\"}],\n")
            text = text.replacingOccurrences(of: "\"edited \(round - 1)\"", with: "\"edited \(round)\"")
            try HandEdit.renameOver(file, text)
            suite.reload()
            let expected = try JSONReader.parseSuite(Data(text.utf8), fileURL: nil)
            let changed = SuiteStorage.changedKeys(from: contents, to: expected)
            #expect(
                changed.contains("key17") && changed.contains(ExactKey("added\(round)")) && !changed.contains("ratio"))
            #expect(suite.storage.storedValues == expected)
            #expect(eventually { Set(recorder.changes.flatMap(\.keys)) == Set(changed.map(\.string)) })
            contents = expected
        }
    }

    @Test func membersFromTheWritersFragmentsAreTheScannedOnes() throws {
        var generator = ValueGenerator(seed: 77, includeNonFinite: true)
        for round in 0..<200 {
            var contents: [String: DefaultsValue] = [:]
            for _ in 0..<(round % 25) { contents[generator.key()] = generator.value(depth: 0) }
            var entries = SuiteFormat.sortedEntries(of: contents)
            var bytes = JSONWriter.encodeSuiteBytes(&entries, reusing: nil)
            // Once more, with most fragments copied from the previous bytes.
            if let first = entries.indices.first {
                entries[first].value = .integer(round)
                entries[first].fragment = nil
            }
            bytes = JSONWriter.encodeSuiteBytes(&entries, reusing: bytes)
            let fromFragments = bytes.withUnsafeBufferPointer {
                JSONSuiteIndex.members(ofWritten: $0, entries: entries)
            }
            let scanned = bytes.withUnsafeBufferPointer { JSONSuiteIndex.scan($0) }
            #expect(fromFragments != nil && fromFragments == scanned)
        }
    }

    @Test func scannerFindsKeyAndValueRanges() throws {
        let text = #"{ "a" : [1, "]", {"b": "}"}] ,"c\"":"x\\" , "n": -1.5e3 }"#
        let bytes = Array(text.utf8)
        let members = try #require(bytes.withUnsafeBufferPointer { JSONSuiteIndex.scan($0) })
        let parts = members.map {
            (String(decoding: bytes[$0.key], as: UTF8.self), String(decoding: bytes[$0.value], as: UTF8.self))
        }
        #expect(parts.map(\.0) == [#""a""#, #""c\"""#, #""n""#])
        #expect(parts.map(\.1) == [#"[1, "]", {"b": "}"}]"#, #""x\\""#, "-1.5e3"])
        for broken in ["{", "{\"a\":1,,}", "{\"a\":1 /*", "{\"a\":1} x", "[]", "{\"a\" 1}", "{\"a\":}", "{\"a\":[1}"] {
            #expect(Array(broken.utf8).withUnsafeBufferPointer { JSONSuiteIndex.scan($0) } == nil, "\(broken)")
        }
    }
}

extension SeededGenerator {
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
}
