import Foundation
import Testing
@testable import ObservableDefaults

/// The round-trip property of every format: a value written to a file and read back equals the value
/// normalised for that format, and normalising is idempotent.
@Suite struct CodecRoundTripTests {
    static let edgeCases: [DefaultsValue] = [
        .dictionary([:]), .array([]), .string(""), .data(Data()),
        .dictionary(["a": .dictionary(["b": .dictionary(["c": .array([.dictionary([:])])])])]),
        .integer(.min), .integer(.max), .integer(0), .integer(-1),
        .double(5.0), .double(5.5), .double(-0.0), .double(0), .double(1e300), .double(.leastNonzeroMagnitude),
        .double(.greatestFiniteMagnitude), .double(-.leastNormalMagnitude), .double(0.1), .double(1e16), .double(1e-7),
        .bool(true), .bool(false),
        .date(Date(timeIntervalSince1970: 1_714_566_600.123_456)), .date(Date(timeIntervalSince1970: 0)),
        .date(Date(timeIntervalSince1970: -1.5)), .date(Date(timeIntervalSinceReferenceDate: 100.999_999_999_999_99)),
        .date(Date(timeIntervalSince1970: 1_714_566_600.9996)),
        .data(Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })),
        .string("naïve café 日本語 🎉👩‍👩‍👧 e\u{301} a\u{308}"),
        .dictionary(["ключ 🎉": .string("значение"), "e\u{301}": .integer(1)]),
        .string("quote \" backslash \\ slash / tab \t nl \n cr \r nul \u{0} bell \u{7} del \u{7F}"),
        .string("<dict>&amp;</dict> ]]> \"'"), .string("  leading and trailing  "), .string("\n"),
        .array([.integer(1), .double(1), .bool(true), .string("1")])
    ]

    static let nonFinite: [DefaultsValue] = [.double(.nan), .double(.infinity), .double(-.infinity)]

    func checkRoundTrip(_ value: DefaultsValue, format: SuiteFormat, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let normalized = format.normalize(value)
        #expect(format.normalize(normalized) == normalized, sourceLocation: sourceLocation)
        let encoded = try format.encode(["k": value])
        #expect(try format.encode(["k": normalized]) == encoded, sourceLocation: sourceLocation)
        let decoded = try format.decode(
            encoded, fileURL: URL(fileURLWithPath: "/tmp/roundtrip.\(format.fileExtension)"))
        #expect(decoded == ["k": normalized], "\(value)", sourceLocation: sourceLocation)
    }

    @Test(arguments: SuiteFormat.allCases)
    func edgeCasesRoundTrip(format: SuiteFormat) throws {
        for value in Self.edgeCases { try checkRoundTrip(value, format: format) }
        for value in Self.nonFinite { try checkRoundTrip(value, format: format) }
        try checkRoundTrip(
            .dictionary(
                Dictionary(uniqueKeysWithValues: Self.edgeCases.enumerated().map { ("\($0.offset)", $0.element) })),
            format: format)
    }

    @Test(arguments: SuiteFormat.allCases)
    func generatedValuesRoundTrip(format: SuiteFormat) throws {
        var generator = ValueGenerator(seed: format == .json ? 0x5EED_0001 : 0x5EED_0002, includeNonFinite: true)
        for _ in 0..<2_000 {
            try checkRoundTrip(generator.value(depth: 1), format: format)
        }
    }

    @Test(arguments: SuiteFormat.allCases)
    func wholeGeneratedSuitesRoundTrip(format: SuiteFormat) throws {
        var generator = ValueGenerator(seed: 42, includeNonFinite: true)
        for _ in 0..<20 {
            var suite: [String: DefaultsValue] = [:]
            for _ in 0..<50 { suite[generator.key()] = generator.value(depth: 1) }
            let decoded = try format.decode(
                try format.encode(suite.exactKeyed), fileURL: URL(fileURLWithPath: "/tmp/s")
            ).stringKeyed
            #expect(decoded == suite.mapValues(format.normalize))
        }
    }

    @Test func jsonNormalisesDatesToMillisecondStringsAndDataToBase64() {
        let date = Date(timeIntervalSince1970: 1_714_566_600.1236)
        #expect(SuiteFormat.json.normalize(.date(date)) == .string("2024-05-01T12:30:00.124Z"))
        #expect(
            SuiteFormat.json.normalize(.date(Date(timeIntervalSince1970: 1_714_566_600.9996)))
                == .string("2024-05-01T12:30:01.000Z"))
        #expect(
            SuiteFormat.json.normalize(.date(Date(timeIntervalSince1970: -0.5))) == .string("1969-12-31T23:59:59.500Z"))
        #expect(SuiteFormat.json.normalize(.data(Data("hi!?".utf8))) == .string("aGkhPw=="))
        #expect(
            SuiteFormat.json.normalize(.array([.dictionary(["d": .data(Data([1]))])]))
                == .array([.dictionary(["d": .string("AQ==")])]))
        #expect(SuiteFormat.json.normalize(.double(5)) == .double(5))
    }

    @Test func propertyListNormalisesDatesToWholeSecondsRoundingDown() {
        #expect(
            SuiteFormat.propertyList.normalize(.date(Date(timeIntervalSince1970: 10.9)))
                == .date(Date(timeIntervalSince1970: 10)))
        #expect(
            SuiteFormat.propertyList.normalize(.date(Date(timeIntervalSince1970: -1.5)))
                == .date(Date(timeIntervalSince1970: -2)))
        #expect(SuiteFormat.propertyList.normalize(.data(Data([1]))) == .data(Data([1])))
    }
}
