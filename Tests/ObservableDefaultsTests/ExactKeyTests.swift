import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Keys (and suite names) that differ only by Unicode normalisation are different keys: `"caf\u{E9}"`
/// (NFC) and `"cafe\u{301}"` (NFD) are equal as Swift `String`s, but a file holds both, so the suite keeps
/// both, writes both back, and tells their observers apart (issue 13, item 7).
@Suite struct ExactKeyTests {
    let directory = TemporaryDirectory()
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    /// Compares key lists by bytes: `Set<String>` and `==` would call the two forms equal.
    static func bytes(_ keys: some Sequence<String>) -> Set<[UInt8]> { Set(keys.map { Array($0.utf8) }) }

    /// A suite file holding both forms of the key, as a person or another tool might write it.
    func makeFile(_ name: String, _ format: SuiteFormat, composed: Int = 1, decomposed: Int = 2) throws -> URL {
        let file = directory.file("\(name).\(format.fileExtension)")
        let text =
            switch format {
            case .json: #"{ "\#(Self.composed)": \#(composed), "\#(Self.decomposed)": \#(decomposed) }"#
            case .propertyList:
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0">
                <dict>
                \t<key>\(Self.composed)</key>
                \t<integer>\(composed)</integer>
                \t<key>\(Self.decomposed)</key>
                \t<integer>\(decomposed)</integer>
                </dict>
                </plist>
                """
            }
        try Data(text.utf8).write(to: file)
        return file
    }

    /// The file's top level as the suite's readers see it (keys by bytes).
    func onDisk(_ suite: DefaultsSuite) throws -> [ExactKey: DefaultsValue] {
        try suite.format.decode(Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)
    }

    @Test func theTwoFormsAreDifferentKeys() {
        #expect(Self.composed == Self.decomposed)  // what Swift says, and why the store cannot use `String` keys
        #expect(ExactKey(Self.composed) != ExactKey(Self.decomposed))
        #expect(Set([ExactKey(Self.composed), ExactKey(Self.decomposed)]).count == 2)
        #expect(ExactKey(Self.decomposed) < ExactKey(Self.composed))  // "e" (0x65) sorts before "é" (0xC3 0xA9)
        #expect(!ExactKey(Self.decomposed + ".x").hasBytePrefix(Self.composed))
        #expect(ExactKey(Self.composed + ".x").hasBytePrefix(Self.composed))
    }

    /// Equality first compares the strings' representations (a key compared with the one it was made from),
    /// then the bytes: both ways must agree with the bytes.
    @Test func equalityIsByBytesWhateverTheRepresentation() {
        let long = String(repeating: "settings.", count: 8) + "count"  // heap storage, not a small string
        let copy = long  // the same storage
        let rebuilt = String(repeating: "settings.", count: 8) + "count"  // the same bytes, other storage
        let other = String(repeating: "settings.", count: 8) + "coun\u{74}\u{301}"
        #expect(ExactKey(long) == ExactKey(copy))
        #expect(ExactKey(long) == ExactKey(rebuilt))
        #expect(ExactKey(long) != ExactKey(String(long.dropLast()) + "x"))
        #expect(ExactKey(long) != ExactKey(other))
        #expect(ExactKey("count") == ExactKey(String("xcount".dropFirst())))  // small, and a substring's copy
        #expect(ExactKey("count") != ExactKey("counu"))
        #expect(ExactKey(Self.composed) != ExactKey(Self.decomposed))
        #expect(ExactKey("") == ExactKey(String()))
    }

    @Test(arguments: SuiteFormat.allCases)
    func bothKeysSurviveAnUnrelatedWrite(format: SuiteFormat) throws {
        let suite = try DefaultsSuite(fileURL: try makeFile("both", format))
        #expect(suite.fileError == nil)
        #expect(Self.bytes(suite.storedKeys) == Self.bytes([Self.composed, Self.decomposed]))
        #expect(suite.value(forKey: Self.composed) == .integer(1))
        #expect(suite.value(forKey: Self.decomposed) == .integer(2))
        suite.set(7, forKey: "unrelated")
        try suite.flush()
        #expect(
            try onDisk(suite) == [
                ExactKey(Self.composed): .integer(1), ExactKey(Self.decomposed): .integer(2), "unrelated": .integer(7)
            ])
    }

    @Test func bothKeysOfABinaryPropertyListAreRead() throws {
        func utf16(_ string: String) -> [UInt8] {
            let units = Array(string.utf16)
            return [0x60 | UInt8(units.count)] + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        let data = BinaryPropertyListReaderTests.bplist([
            [0xD2, 1, 2, 3, 4], utf16(Self.composed), utf16(Self.decomposed), [0x10, 1], [0x10, 2]
        ])
        let values = try SuiteFormat.propertyList.decode(data, fileURL: directory.file("b.plist"))
        #expect(values == [ExactKey(Self.composed): .integer(1), ExactKey(Self.decomposed): .integer(2)])
    }

    @Test(arguments: SuiteFormat.allCases)
    func settingOneFormLeavesTheOther(format: SuiteFormat) throws {
        let suite = try DefaultsSuite(fileURL: try makeFile("set", format))
        suite.set(10, forKey: Self.composed)
        #expect(suite.value(forKey: Self.decomposed) == .integer(2))
        suite.removeObject(forKey: Self.decomposed)
        #expect(suite.value(forKey: Self.composed) == .integer(10))
        #expect(try onDisk(suite) == [ExactKey(Self.composed): .integer(10)])
        #expect(Self.bytes(suite.storedKeys) == Self.bytes([Self.composed]))
    }

    @Test func observersOfOneFormDoNotHearTheOther() throws {
        let suite = try DefaultsSuite(fileURL: try makeFile("observe", .json))
        let byKey = ChangeRecorder(), byPrefix = ChangeRecorder()
        let keyObservation = suite.observe(keys: [Self.composed, "marker"]) { byKey.record($0) }
        let prefixObservation = suite.observe(prefix: Self.composed) { byPrefix.record($0) }
        defer {
            keyObservation.cancel()
            prefixObservation.cancel()
        }
        suite.set(20, forKey: Self.decomposed)
        suite.set(21, forKey: Self.decomposed + ".child")
        suite.set(1, forKey: "marker")
        #expect(byKey.waitFor(key: "marker"))
        #expect(byKey.changes(before: "marker").isEmpty)
        #expect(byPrefix.changes.isEmpty)
        suite.set(11, forKey: Self.composed)
        #expect(byKey.changes.map { Self.bytes($0.keys) }.last == Self.bytes([Self.composed]))
        #expect(byPrefix.changes.map { Self.bytes($0.keys) } == [Self.bytes([Self.composed])])
    }

    @Test(arguments: SuiteFormat.allCases)
    func aHandEditOfOneFormAnnouncesOnlyIt(format: SuiteFormat) throws {
        let file = try makeFile("edit", format)
        let suite = try DefaultsSuite(fileURL: file)
        let all = ChangeRecorder(), composedOnly = ChangeRecorder()
        let allObservation = suite.observe { all.record($0) }
        let composedObservation = suite.observe(keys: [Self.composed]) { composedOnly.record($0) }
        defer {
            allObservation.cancel()
            composedObservation.cancel()
        }
        // A write first, so the JSON re-read below compares members with the writer's (the incremental path).
        suite.set(1, forKey: "marker")
        try suite.flush()
        all.clear()
        var edited = try onDisk(suite)
        edited[ExactKey(Self.decomposed)] = .integer(3)
        edited["marker"] = .integer(2)
        let temporary = directory.file(".edit-\(UUID().uuidString)")
        try format.encode(edited).write(to: temporary)
        #expect(rename(temporary.path, file.path) == 0)
        #expect(all.waitFor(key: "marker"))
        let announced = all.changes(before: "marker")
        #expect(announced.map { Self.bytes($0.keys) } == [Self.bytes([Self.decomposed])])
        #expect(announced.map(\.origin) == [.outside])
        #expect(composedOnly.changes.isEmpty)
        #expect(suite.value(forKey: Self.decomposed) == .integer(3))
        #expect(suite.value(forKey: Self.composed) == .integer(1))
    }

    @Test func suiteNamesThatDifferOnlyByNormalisationAreTwoSuites() throws {
        let composed = try DefaultsSuite(name: Self.composed, directory: directory.url)
        let decomposed = try DefaultsSuite(name: Self.decomposed, directory: directory.url)
        #expect(composed.storage !== decomposed.storage)
        composed.set(1, forKey: "which")
        decomposed.set(2, forKey: "which")
        #expect(composed.value(forKey: "which") == .integer(1))
        #expect(decomposed.value(forKey: "which") == .integer(2))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasSuffix(".json")
        }
        #expect(Self.bytes(names) == Self.bytes(["\(Self.composed).json", "\(Self.decomposed).json"]))
        // A second handle on either name shares that suite's storage.
        #expect(try DefaultsSuite(name: Self.decomposed, directory: directory.url).storage === decomposed.storage)
    }
}
