import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Hostile and unusual input from issue 13: files that used to crash or stall the process, values the
/// readers would reject, numbers the model cannot hold exactly, and characters XML cannot hold. Each
/// case returns a clear error in-process, and nothing is written or changed when a value is refused.
@Suite struct HostileFileTests {
    let directory = TemporaryDirectory()

    /// Copies a fixture into the temporary directory as a suite file and opens it.
    func openFixture(_ fixture: String, as name: String) throws -> DefaultsSuite {
        let file = directory.file(name)
        try Fixtures.data(fixture).write(to: file)
        return try DefaultsSuite(fileURL: file)
    }

    // MARK: Files that crashed or stalled the process

    @Test(arguments: ["hostile/reference-overflow-hex.plist", "hostile/reference-overflow-decimal.plist"])
    func characterReferenceOutOfRangeIsAPositionedError(fixture: String) throws {
        let suite = try openFixture(fixture, as: "refs.plist")
        let error = try #require(suite.fileError)
        #expect(error.kind == .malformedFile)
        #expect(error.message.hasPrefix("character reference '&#"))
        #expect(error.message.contains("is not a character XML allows"))
        if fixture.hasSuffix("hex.plist") {
            #expect((error.line, error.column) == (1, 16))
        } else {
            #expect((error.line, error.column) == (5, 10))
        }
    }

    @Test(arguments: [
        "&#0;", "&#x1;", "&#xFFFE;", "&#xFFFF;", "&#xD800;", "&#x110000;", "&#99999999999;", "&#xFFFFFFFFFF;"
    ])
    func characterReferencesXMLForbidsAreErrors(reference: String) throws {
        let text = "<plist><dict><key>a</key><string>x\(reference)</string></dict></plist>"
        let error = try #require(throws: DefaultsError.self) {
            try SuiteFormat.propertyList.decode(Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/r.plist"))
        }
        #expect(error.message.hasPrefix("character reference '\(reference)' is not a character XML allows"))
        #expect((error.line, error.column) == (1, 35))
    }

    @Test func characterReferencesXMLAllowsStillRead() throws {
        let text = "<plist><dict><key>a</key><string>&#x9;&#10;&#x10FFFF;&#xFFFD;&#65;</string></dict></plist>"
        let values = try SuiteFormat.propertyList.decode(Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/r.plist"))
        #expect(values == ["a": .string("\t\n\u{10FFFF}\u{FFFD}A")])
    }

    /// A running watcher of a plist suite reports the crash text as an error when someone saves it.
    @Test func watcherSurvivesTheCrashText() throws {
        let file = directory.file("watched.plist")
        let suite = try DefaultsSuite(fileURL: file)
        suite.set("before", forKey: "a")
        let errors = ErrorRecorder()
        let changes = ChangeRecorder()
        let errorObservation = suite.observeErrors { errors.record($0) }
        let observation = suite.observe { changes.record($0) }
        defer { errorObservation.cancel(); observation.cancel() }
        try HandEdit.renameOver(file, "<plist><string>&#x100000000;")
        #expect(eventually { !errors.errors.isEmpty })
        #expect(errors.errors.first?.message.contains("character reference '&#x100000000;'") == true)
        #expect(suite.string(forKey: "a") == "before")
        // The watcher still works: a good file is picked up.
        try HandEdit.renameOver(
            file, String(decoding: PropertyListWriter.encodeSuite(["a": .string("after")]), as: UTF8.self))
        #expect(changes.waitFor(key: "a"))
        #expect(suite.string(forKey: "a") == "after")
    }

    @Test func binaryPlistWithASetIsAnErrorNotACrash() throws {
        let suite = try openFixture("hostile/set.plist", as: "set.plist")
        #expect(
            suite.fileError?.message
                == "binary property list, byte offset 8: object 0: unsupported value: set (marker 0xC1); property-list suites hold arrays, not sets"
        )
        let nested = try openFixture("hostile/set-in-dict.plist", as: "set-in-dict.plist")
        #expect(nested.fileError?.message.contains("object 2: unsupported value: set (marker 0xC1)") == true)
        // Nothing is overwritten: a set is kept pending.
        nested.set(1, forKey: "x")
        #expect(nested.hasPendingChanges)
        #expect(try Data(contentsOf: nested.fileURL) == (try Fixtures.data("hostile/set-in-dict.plist")))
    }

    /// Expanded in full it would never finish: the reader stops at its expansion limit and says so.
    @Test func exponentialBinaryPlistIsRefusedBeforeItIsExpanded() throws {
        let suite = try openFixture("hostile/exponential.plist", as: "exp.plist")
        #expect(suite.fileError?.message.contains("expands to more than") == true)
    }

    @Test func cyclicAndCorruptBinaryPlistsAreNamed() throws {
        #expect(
            try openFixture("hostile/cycle.plist", as: "cycle.plist").fileError?.message.contains("reference cycle")
                == true)
        #expect(
            try openFixture("hostile/bad-reference.plist", as: "ref.plist").fileError?.message.contains(
                "reference to object 9, but the file has 2 objects") == true)
        let truncated = try #require(try openFixture("hostile/truncated.plist", as: "cut.plist").fileError)
        #expect(truncated.message.hasPrefix("binary property list, byte offset "))
        #expect(!truncated.message.contains("Unexpected character"))
    }

    @Test func theBinaryFixtureRoundTripsThroughASuite() throws {
        let suite = try openFixture("plist/settings-binary.plist", as: "binary.plist")
        #expect(suite.fileError == nil)
        let before = suite.values()
        suite.set("new", forKey: "added")
        #expect(suite.lastError == nil)
        var expected = before
        expected["added"] = .string("new")
        #expect(try contentsOnDisk(suite.fileURL, format: .propertyList) == expected)
    }

    /// Bytes that are neither XML nor a binary property list never reach Foundation's old text format.
    @Test func nonXMLTextIsRejectedBeforeFoundation() throws {
        let error = try #require(throws: DefaultsError.self) {
            try SuiteFormat.propertyList.decode(
                Data("{ a = (1, 2); }".utf8), fileURL: URL(fileURLWithPath: "/tmp/o.plist"))
        }
        #expect(error.message.hasPrefix("not a property list: expected an XML document"))
    }

    // MARK: Writers enforce the readers' limits

    /// An array nested `depth` deep (the innermost is empty).
    static func nested(_ depth: Int) -> DefaultsValue {
        var value = DefaultsValue.array([])
        for _ in 1..<depth { value = .array([value]) }
        return value
    }

    /// Releases a deeply nested value one level at a time (releasing it at once recurses per level).
    static func dismantle(_ value: inout DefaultsValue) {
        var current = value
        value = .bool(false)
        while case .array(let items) = current, let first = items.first { current = first }
    }

    @Test(arguments: [SuiteFormat.json, .propertyList])
    func tooDeepValueIsRefusedAndNothingIsWritten(format: SuiteFormat) throws {
        let suite = try DefaultsSuite(fileURL: directory.file("deep.\(format.fileExtension)"))
        suite.set(1, forKey: "kept")
        let bytes = try Data(contentsOf: suite.fileURL)
        for depth in [512, 600, 100_000] {
            var value = Self.nested(depth)
            suite.set(value, forKey: "deep")
            Self.dismantle(&value)
            let error = try #require(suite.lastError)
            #expect(error.kind == .unsupportedValue)
            #expect(error.key == "deep")
            #expect(error.message.contains("nested more than 511 levels deep"))
            #expect(suite.object(forKey: "deep") == nil)
            #expect(!suite.hasPendingChanges)
            #expect(try Data(contentsOf: suite.fileURL) == bytes)
        }
        // The deepest value the readers accept is written and reads back.
        let deepest = Self.nested(511)
        suite.set(deepest, forKey: "deep")
        #expect(suite.lastError?.key == "deep")  // the earlier error is still the last one
        #expect(try contentsOnDisk(suite.fileURL, format: format)["deep"] == deepest)
    }

    @Test func tooDeepValueInABatchIsRefusedAlone() throws {
        let suite = try DefaultsSuite(fileURL: directory.file("batch.json"))
        var value = Self.nested(600)
        suite.performBatchUpdates {
            suite.set(value, forKey: "deep")
            suite.set(2, forKey: "fine")
        }
        Self.dismantle(&value)
        #expect(suite.lastError?.key == "deep")
        #expect(try contentsOnDisk(suite.fileURL) == ["fine": .integer(2)])
    }

    /// A Codable value that nests one array per level, `remaining` more levels, without holding them.
    struct Nest: Encodable {
        var remaining: Int
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            if remaining > 0 { try container.encode(Nest(remaining: remaining - 1)) }
        }
    }

    @Test func codableEncoderRefusesWhatTheReadersWouldReject() throws {
        let deepest = try DefaultsValueEncoder().encode(Nest(remaining: 510))
        #expect(deepest == Self.nested(511))
        for remaining in [511, 600, 100_000] {
            #expect(throws: EncodingError.self) { try DefaultsValueEncoder().encode(Nest(remaining: remaining)) }
        }
        let error = #expect(throws: EncodingError.self) { try DefaultsValueEncoder().encode(Nest(remaining: 100_000)) }
        if case .invalidValue(_, let context)? = error {
            #expect(context.debugDescription.contains("nested more than 511 levels deep"))
        } else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
        }
    }

    // MARK: Numbers keep their text

    @Test func numbersTheModelCannotHoldKeepTheirTextAcrossUnrelatedWrites() throws {
        let file = directory.file("numbers.json")
        let original = """
            {
              "big": 12345678901234567891,
              "huge": 1e400,
              "nested": {"x": [1e400, 1.50, -12345678901234567891]},
              "other": 1,
              "precise": 0.1000000000000000055511151231257827
            }

            """
        try Data(original.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        #expect(suite.double(forKey: "huge") == .infinity)
        #expect(suite.object(forKey: "big") as? Double == 12345678901234567891.0)
        suite.set(2, forKey: "other")
        #expect(suite.lastError == nil)
        var text = try String(contentsOf: file, encoding: .utf8)
        for kept in [
            "\"big\": 12345678901234567891,", "\"huge\": 1e400,", "1e400,", "1.50,", "-12345678901234567891",
            "\"precise\": 0.1000000000000000055511151231257827"
        ] {
            #expect(text.contains(kept), "\(kept) missing from:\n\(text)")
        }
        #expect(!text.contains("Infinity") && !text.contains("e19"))

        // A number edited in by hand and read incrementally keeps its text too.
        try HandEdit.renameOver(
            file,
            text.replacingOccurrences(of: "\"other\": 2", with: "\"other\": 2,\n  \"later\": 98765432109876543210"))
        suite.reload()
        suite.set(3, forKey: "other")
        text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("\"later\": 98765432109876543210,"), "\(text)")
        // And one that the write finds changed on disk (read under the lock, without a reload).
        try HandEdit.renameOver(
            file, text.replacingOccurrences(of: "\"other\": 3", with: "\"other\": 3,\n  \"unseen\": -1e999"))
        suite.set(4, forKey: "other")
        text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("\"unseen\": -1e999"), "\(text)")
        #expect(text.contains("\"later\": 98765432109876543210,"), "\(text)")
        #expect(text.contains("\"huge\": 1e400,"), "\(text)")
        #expect(suite.double(forKey: "unseen") == -.infinity)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoubleIntoJSONIsRefused(double: Double) throws {
        let suite = try DefaultsSuite(fileURL: directory.file("nonfinite.json"))
        suite.set(1, forKey: "kept")
        let bytes = try Data(contentsOf: suite.fileURL)
        suite.set(double, forKey: "x")
        suite.set(DefaultsValue.dictionary(["inner": .array([.double(1), .double(double)])]), forKey: "y")
        let error = try #require(suite.lastError)
        #expect(error.kind == .unsupportedValue)
        #expect(error.key == "y")
        #expect(
            error.message.hasPrefix(
                "at [\"inner\"][1]: \(double) cannot be stored in a JSON suite (JSON has no NaN or infinity)"))
        #expect(suite.object(forKey: "x") == nil && suite.object(forKey: "y") == nil)
        #expect(try Data(contentsOf: suite.fileURL) == bytes)
    }

    @Test func nonFiniteDoubleIntoAPropertyListIsFine() throws {
        let suite = try DefaultsSuite(fileURL: directory.file("nonfinite.plist"))
        suite.set(Double.infinity, forKey: "x")
        #expect(suite.lastError == nil)
        #expect(try contentsOnDisk(suite.fileURL, format: .propertyList) == ["x": .double(.infinity)])
    }

    // MARK: Characters XML cannot hold, dates the files cannot hold

    @Test(arguments: ["\u{0}", "a\u{1}b", "\u{1F}", "\u{FFFE}", "x\u{FFFF}", "\u{7}bell"])
    func propertyListRefusesCharactersXMLCannotHold(string: String) throws {
        let suite = try DefaultsSuite(fileURL: directory.file("chars.plist"))
        suite.set("ok", forKey: "kept")
        let bytes = try Data(contentsOf: suite.fileURL)
        suite.set(string, forKey: "s")
        #expect(suite.lastError?.key == "s")
        #expect(suite.lastError?.message.hasPrefix("the string contains U+") == true)
        suite.set(DefaultsValue.array([.string("fine"), .dictionary(["k": .string(string)])]), forKey: "nested")
        #expect(suite.lastError?.message.hasPrefix("at [1][\"k\"]: the string contains U+") == true)
        suite.set(1, forKey: "key\(string)")
        #expect(suite.lastError?.key == "key\(string)")
        #expect(suite.lastError?.message.hasPrefix("the key contains U+") == true)
        suite.set(DefaultsValue.dictionary([string: .integer(1)]), forKey: "inner")
        #expect(suite.lastError?.key == "inner")
        #expect(suite.storedKeys == ["kept"])
        #expect(try Data(contentsOf: suite.fileURL) == bytes)
        // JSON escapes them, so a JSON suite takes them.
        let json = try DefaultsSuite(fileURL: directory.file("chars.json"))
        json.set(string, forKey: "s")
        #expect(json.lastError == nil)
        #expect(try contentsOnDisk(json.fileURL)["s"] == .string(string))
    }

    /// A binary property list can hold characters and dates XML cannot; writing other keys refuses to turn
    /// them into XML other tools reject, keeps the change pending and names the key.
    @Test(arguments: [
        ("text", DefaultsValue.string("a\u{1}b"), "the string contains U+0001"),
        ("when", .date(Date(timeIntervalSince1970: 1e15)), "outside the years 0000 to 9999")
    ])
    func binaryValuesXMLCannotHoldBlockTheWriteWithAnError(key: String, value: DefaultsValue, message: String) throws {
        let file = directory.file("carried.plist")
        let binary = try PropertyListSerialization.data(
            fromPropertyList: [key: value.foundationObject, "kept": 1], format: .binary, options: 0)
        try binary.write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        #expect(suite.fileError == nil)
        #expect(suite.storedKeys.sorted() == ["kept", key].sorted())
        suite.set(2, forKey: "other")
        let error = try #require(suite.lastError)
        #expect(error.key == key)
        #expect(error.message.contains(message))
        #expect(suite.hasPendingChanges)
        #expect(try Data(contentsOf: file) == binary)
        // Removing the value lets the pending change through.
        suite.removeObject(forKey: key)
        #expect(!suite.hasPendingChanges)
        #expect(try contentsOnDisk(file, format: .propertyList) == ["kept": .integer(1), "other": .integer(2)])
    }

    @Test func propertyListKeepsTabsNewlinesAndCarriageReturns() throws {
        let suite = try DefaultsSuite(fileURL: directory.file("ws.plist"))
        suite.set("a\tb\nc\r\nd \u{FFFD} \u{10FFFF}", forKey: "s")
        #expect(suite.lastError == nil)
        #expect(
            try contentsOnDisk(suite.fileURL, format: .propertyList)["s"] == .string("a\tb\nc\r\nd \u{FFFD} \u{10FFFF}")
        )
    }

    @Test(arguments: [SuiteFormat.json, .propertyList])
    func datesOutsideTheFilesRangeAreRefused(format: SuiteFormat) throws {
        let suite = try DefaultsSuite(fileURL: directory.file("dates.\(format.fileExtension)"))
        suite.set(1, forKey: "kept")
        let bytes = try Data(contentsOf: suite.fileURL)
        for seconds in [1e15, -1e15, 253_402_300_800, -62_167_219_201, .infinity, .nan] {
            suite.set(Date(timeIntervalSince1970: seconds), forKey: "d")
            #expect(suite.lastError?.key == "d")
            #expect(suite.lastError?.message.contains("outside the years 0000 to 9999") == true, "\(seconds)")
            // Not `object(forKey:) == nil`: describing a NaN date on failure crashes Foundation.
            #expect(suite.storedKeys == ["kept"])
            #expect(try Data(contentsOf: suite.fileURL) == bytes)
        }
        // The last second of 9999 and the first of year 0000 are kept exactly.
        for seconds in [253_402_300_799.0, -62_167_219_200] {
            suite.set(Date(timeIntervalSince1970: seconds), forKey: "d")
            #expect(suite.date(forKey: "d") == Date(timeIntervalSince1970: seconds))
            let onDisk = try contentsOnDisk(suite.fileURL, format: format)["d"]
            #expect(onDisk.flatMap { Date(defaultsValue: $0) } == Date(timeIntervalSince1970: seconds))
        }
    }
}

/// XML values Foundation would read as something else (and the next write would then store): errors with
/// their line and column, and the file is left as the person wrote it.
@Suite struct MisreadXMLValueTests {
    let directory = TemporaryDirectory()

    @Test(arguments: [
        ("<integer>9223372036854775808</integer>", "the integer 9223372036854775808 does not fit in 64 bits"),
        ("<integer>-9223372036854775809</integer>", "the integer -9223372036854775809 does not fit in 64 bits"),
        ("<integer>18446744073709551615</integer>", "the integer 18446744073709551615 does not fit in 64 bits"),
        ("<date>2024-13-45T99:99:99Z</date>", "'2024-13-45T99:99:99Z' is not a date"),
        ("<date>2023-02-29T00:00:00Z</date>", "'2023-02-29T00:00:00Z' is not a date"),
        ("<data>@@@</data>", "the <data> element is not base64")
    ])
    func aValueFoundationWouldMisreadIsAPositionedErrorAndTheFileStays(element: String, message: String) throws {
        let file = directory.file("values.plist")
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t\(element)\n</dict>\n</plist>\n"
        try Data(text.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let error = try #require(suite.fileError)
        #expect(error.kind == .malformedFile)
        #expect(error.message.hasPrefix(message), "\(error)")
        let valueColumn = element.firstIndex(of: ">").map { element.distance(from: element.startIndex, to: $0) + 3 }
        #expect((error.line, error.column) == (5, valueColumn), "\(error)")
        suite.set(1, forKey: "other")  // waits for a file that parses: the person's value is never rewritten
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self) == text)
        #expect(suite.hasPendingChanges)
    }

    @Test func unpaddedBase64ReadsAsItsBytes() throws {
        // Foundation reads `AAE` as empty data; its bytes are 00 01.
        let text = "<plist version=\"1.0\"><dict><key>d</key><data>AAE</data></dict></plist>"
        let values = try SuiteFormat.propertyList.decodeSuite(
            Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/d.plist"))
        #expect(values["d"] == .data(Data([0x00, 0x01])))
    }

    @Test func aLeapSecondAndAValidLeapDayStillRead() throws {
        for (element, year) in [
            ("<date>2024-02-29T12:00:00Z</date>", 2024), ("<date>2016-12-31T23:59:60Z</date>", 2017)
        ] {
            let text = "<plist version=\"1.0\"><dict><key>when</key>\(element)</dict></plist>"
            let values = try SuiteFormat.propertyList.decodeSuite(
                Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/when.plist"))
            guard case .date(let date)? = values["when"] else {
                Issue.record("\(element) did not read as a date: \(values)")
                continue
            }
            #expect(
                Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date).year
                    == year)
        }
    }
}
