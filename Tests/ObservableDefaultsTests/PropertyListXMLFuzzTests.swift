import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Valid XML property lists mutated thousands of times (bytes and tags deleted, inserted, replaced): every
/// file the reader rejects gets an error with a line and column, none crashes or takes long, and every
/// file it accepts that Foundation also accepts reads to the same values.
@Suite struct XMLPropertyListFuzzTests {
    static let mutatedFiles = 6_000

    /// Hand-written documents in the forms people and other tools write (comments, CDATA, references,
    /// CRLF, attributes, hexadecimal integers), added to the writer's output for random suites.
    static let handWritten = [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\r\n<!-- settings -->\r\n<plist version=\"1.0\">\r\n<dict>\r\n\t<key>name</key>\r\n\t<string><![CDATA[a <b> & c]]></string>\r\n\t<key>count</key>\r\n\t<integer>0x2A</integer>\r\n\t<key>ratio</key>\r\n\t<real>.5</real>\r\n\t<key>on</key>\r\n\t<true/>\r\n</dict>\r\n</plist>\r\n",
        "<plist version=\"1.0\"><dict><key>a &amp; b</key><string>&lt;&#233;&#x1F600;&gt;</string><key>list</key><array><integer>-1</integer><real>1e-3</real><date>2024-02-29T12:00:00Z</date><data>AAECAw==</data><false/></array><key>nested</key><dict><key>k</key><string/></dict></dict></plist>",
        "<?xml version=\"1.0\"?>\n<plist>\n<dict>\n    <!-- a comment -->\n    <key note=\"x\">when</key>\n    <date>1999-12-31T23:59:59Z</date>\n    <key>empty</key>\n    <array/>\n    <key>inf</key>\n    <real>-inf</real>\n</dict>\n</plist>\n"
    ]

    static func seeds() throws -> [[UInt8]] {
        var generator = ValueGenerator(seed: 0x32_F022, includeNonFinite: true)
        var seeds = handWritten.map { Array($0.utf8) }
        for _ in 0..<12 {
            var suite: [String: DefaultsValue] = [:]
            for _ in 0..<generator.int(1..<8) { suite[generator.key()] = generator.value(depth: 0) }
            let bytes = try SuiteFormat.propertyList.encodeSuite(suite)
            // Only documents that are valid and read the same by both readers (the generator makes
            // strings XML cannot hold, and the writer leaves those to validation).
            if let ours = try? XMLPlist.ours(bytes), XMLPlist.foundations(bytes).map({ agree(ours, $0) }) == true {
                seeds.append(Array(bytes))
            }
        }
        return seeds
    }

    static let snippets = [
        "<", ">", "/", "&", ";", "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#0;", "&#xD800;", "&bogus;", "<?pi?>",
        "<key>", "</key>", "<string>", "</string>", "<dict>", "</dict>", "<array>", "</array>", "<integer>",
        "</integer>", "<real>", "<date>", "<data>", "<true/>", "<false/>", "<plist>", "</plist>", "<!DOCTYPE x [", "\"",
        "'", "=", " a=\"b\"", "\r", "\r\n", "\u{FEFF}", "é", "0x", "-", "+", "e", "nan", "Z", "T", "99", "\u{1}", "\0"
    ]

    /// Applies one random mutation to `bytes`.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        let position = Int.random(in: 0...bytes.count, using: &random)
        func randomByte() -> UInt8 {
            let interesting = Array("<>/&;!?-[]\"'= \n\r\tazAZ09x.#".utf8) + [0x00, 0x80, 0xC3, 0xFF]
            return interesting[Int.random(in: 0..<interesting.count, using: &random)]
        }
        /// The tag starting at or after `position`.
        func tag() -> Range<Int>? {
            guard let start = bytes[position...].firstIndex(of: UInt8(ascii: "<")),
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ">"))
            else { return nil }
            return start..<end + 1
        }
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            let end = min(bytes.count, position + Int.random(in: 1...8, using: &random))
            bytes.removeSubrange(position..<end)
        case 1:
            bytes.insert(randomByte(), at: position)
        case 2 where position < bytes.count:
            bytes[position] = randomByte()
        case 3:
            if let tag = tag() { bytes.removeSubrange(tag) }
        case 4:
            if let tag = tag() {
                let copy = Array(bytes[tag])
                bytes.insert(contentsOf: copy, at: Int.random(in: 0...bytes.count, using: &random))
            }
        case 5:
            if let tag = tag() {
                bytes.replaceSubrange(
                    tag, with: Array(snippets[Int.random(in: 0..<snippets.count, using: &random)].utf8))
            }
        case 6:
            bytes.insert(
                contentsOf: Array(snippets[Int.random(in: 0..<snippets.count, using: &random)].utf8), at: position)
        default:
            if !bytes.isEmpty {
                let other = Int.random(in: 0..<bytes.count, using: &random)
                bytes.swapAt(min(position, bytes.count - 1), other)
            }
        }
    }

    /// Whether the two readings agree. The one difference expected: Foundation drops the last group of
    /// unpadded base64 (`AAE` reads as empty data) where the library reads it as its bytes (`00 01`).
    static func agree(_ ours: DefaultsValue, _ foundations: DefaultsValue) -> Bool {
        switch (ours, foundations) {
        case (.data(let mine), .data(let theirs)): mine.starts(with: theirs) && mine.count - theirs.count < 3
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { agree($0, $1) }
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count && a.allSatisfy { key, value in b[key].map { agree(value, $0) } ?? false }
        default: ours == foundations
        }
    }

    static func agree(_ ours: [String: DefaultsValue], _ foundations: [String: DefaultsValue]) -> Bool {
        agree(.dictionary(ours), .dictionary(foundations))
    }

    @Test func mutatedDocumentsGiveAPositionedErrorOrFoundationsValues() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 10)
        var random = SeededGenerator(seed: 0x32_F0CC)
        var malformed = 0, positioned = 0, acceptedByFoundationToo = 0, accepted = 0, bothAccepted = 0
        var slowest = Duration.zero
        var reported = 0
        let clock = ContinuousClock()
        for _ in 0..<Self.mutatedFiles {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            for _ in 0..<Int.random(in: 1...3, using: &random) { Self.mutate(&bytes, &random) }
            let data = Data(bytes)
            var result: Result<[String: DefaultsValue], DefaultsError>!
            let elapsed = clock.measure { result = Result { () throws(DefaultsError) in try XMLPlist.ours(data) } }
            slowest = max(slowest, elapsed)
            // Foundation reads other text in the old text format, and logs as it fails; such files are not XML.
            let isMarkup =
                bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "<")
            let foundations = isMarkup ? XMLPlist.foundations(data) : nil
            switch result! {
            case .failure(let error):
                malformed += 1
                if foundations != nil { acceptedByFoundationToo += 1 }
                let hasPosition =
                    error.line != nil && error.column != nil
                    && !error.message.contains("could not be read here")
                if hasPosition {
                    positioned += 1
                } else if reported < 5 {
                    reported += 1
                    Issue.record("no line and column: \(error)\n\(String(decoding: bytes, as: UTF8.self))")
                }
            case .success(let values):
                accepted += 1
                guard let foundations else { continue }
                bothAccepted += 1
                if !Self.agree(values, foundations), reported < 5 {
                    reported += 1
                    Issue.record(
                        "ours \(values) ≠ Foundation's \(foundations) for:\n\(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
        #expect(positioned == malformed)
        #expect(malformed > Self.mutatedFiles / 2, "the mutations should break most files")
        #expect(slowest < .milliseconds(500), "the slowest file took \(slowest)")
        print(
            "XML fuzz: \(Self.mutatedFiles) mutated files: \(malformed) malformed, \(positioned) of them with line and column (Foundation accepted \(acceptedByFoundationToo) of them); \(accepted) read, \(bothAccepted) also by Foundation, same values; slowest \(slowest)"
        )
    }

    /// Every prefix of a valid document (a file caught half-written) is an error with a line and column.
    @Test func everyTruncationIsAPositionedError() throws {
        for seed in Self.handWritten {
            let bytes = Array(seed.utf8)
            for length in 1..<bytes.count {
                let data = Data(bytes[..<length])
                if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { continue }
                do {
                    _ = try XMLPlist.ours(data)
                    // A cut after `</plist>` (just before a line end) leaves a whole document.
                    let rest = bytes[length...].allSatisfy { $0 == 0x0A || $0 == 0x0D }
                    #expect(rest, "a truncated file read: \(String(decoding: data, as: UTF8.self))")
                } catch {
                    #expect(error.line != nil && error.column != nil, "\(error)")
                }
            }
        }
    }
}
