import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct ValueConvertibleTests {
    @Test func scalarsConvertStrictlyWhereItMatters() {
        #expect(String(defaultsValue: .string("a")) == "a")
        #expect(String(defaultsValue: .integer(1)) == nil)
        #expect(Bool(defaultsValue: .bool(true)) == true)
        #expect(Bool(defaultsValue: .integer(1)) == nil)
        #expect(Double(defaultsValue: .integer(3)) == 3)
        #expect(Double(defaultsValue: .double(2.5)) == 2.5)
        #expect(Double(defaultsValue: .string("2.5")) == nil)
        #expect(Float(defaultsValue: .double(1.5)) == 1.5)
        #expect(Float(defaultsValue: .integer(2)) == 2)
        #expect(Float(defaultsValue: .double(1e300)) == nil)
        #expect(Float(defaultsValue: .double(.infinity)) == .infinity)
        #expect(Float(1.25).defaultsValue == .double(1.25))
        #expect(5.0.defaultsValue == .double(5))
        #expect(true.defaultsValue == .bool(true))
    }

    @Test func integersAreRangeCheckedAndAcceptIntegralDoubles() {
        #expect(Int(defaultsValue: .integer(.min)) == .min)
        #expect(Int(defaultsValue: .double(5)) == 5)
        #expect(Int(defaultsValue: .double(5.5)) == nil)
        #expect(Int(defaultsValue: .double(1e300)) == nil)
        #expect(Int(defaultsValue: .bool(true)) == nil)
        #expect(Int8(defaultsValue: .integer(127)) == 127)
        #expect(Int8(defaultsValue: .integer(128)) == nil)
        #expect(UInt8(defaultsValue: .integer(-1)) == nil)
        #expect(UInt16(defaultsValue: .integer(65535)) == 65535)
        #expect(Int32(defaultsValue: .integer(Int(Int32.min))) == .min)
        #expect(UInt32(defaultsValue: .integer(Int(UInt32.max))) == .max)
        #expect(Int64(defaultsValue: .integer(.max)) == .max)
        #expect(Int16(-3).defaultsValue == .integer(-3))
        #expect(UInt64.max.defaultsValue == .string("18446744073709551615"))
        #expect(UInt64(defaultsValue: .string("18446744073709551615")) == .max)
        #expect(UInt(defaultsValue: .integer(7)) == 7)
        #expect(UInt64(42).defaultsValue == .integer(42))
        #expect(Int(defaultsValue: .string("5")) == nil)
    }

    @Test func datesReadDatesAndISO8601Strings() throws {
        let date = Date(timeIntervalSince1970: 1_714_566_600.123)
        #expect(Date(defaultsValue: .date(date)) == date)
        let parsed = try #require(Date(defaultsValue: .string("2024-05-01T12:30:00.123Z")))
        #expect(abs(parsed.timeIntervalSince1970 - 1_714_566_600.123) < 1e-6)
        #expect(Date(defaultsValue: .string("2024-05-01T12:30:00Z")) == Date(timeIntervalSince1970: 1_714_566_600))
        #expect(Date(defaultsValue: .string("2024-05-01T14:30:00+02:00")) == Date(timeIntervalSince1970: 1_714_566_600))
        #expect(Date(defaultsValue: .string("1969-12-31T23:59:59.500Z")) == Date(timeIntervalSince1970: -0.5))
        #expect(Date(defaultsValue: .string("2024-02-30T00:00:00Z")) == nil)
        #expect(Date(defaultsValue: .string("yesterday")) == nil)
        #expect(Date(defaultsValue: .integer(0)) == nil)
        // The JSON form of a date reads back as the date it was rounded to.
        guard case .string(let text) = SuiteFormat.json.normalize(.date(date)) else {
            Issue.record("not a string"); return
        }
        #expect(text == "2024-05-01T12:30:00.123Z")
        #expect(ISO8601Text.millisecondString(for: try #require(Date(defaultsValue: .string(text)))) == text)
    }

    @Test func dataReadsDataAndBase64() {
        #expect(Data(defaultsValue: .data(Data([1]))) == Data([1]))
        #expect(Data(defaultsValue: .string("AQID")) == Data([1, 2, 3]))
        #expect(Data(defaultsValue: .string("not base64!")) == nil)
        #expect(Data([1]).defaultsValue == .data(Data([1])))
    }

    @Test func urlsAreStoredAsAbsoluteStrings() {
        let url = URL(string: "https://example.com/path?q=1")!
        #expect(url.defaultsValue == .string("https://example.com/path?q=1"))
        #expect(URL(defaultsValue: .string("https://example.com/path?q=1")) == url)
        #expect(URL(fileURLWithPath: "/tmp/a b").defaultsValue == .string("file:///tmp/a%20b"))
        #expect(URL(defaultsValue: .integer(1)) == nil)
    }

    @Test func collectionsConvertElementwiseAndFailAsAWhole() {
        #expect([Int](defaultsValue: .array([.integer(1), .double(2)])) == [1, 2])
        #expect([Int](defaultsValue: .array([.integer(1), .string("x")])) == nil)
        #expect([String: [Bool]](defaultsValue: .dictionary(["a": .array([.bool(true)])])) == ["a": [true]])
        #expect([String: Int](defaultsValue: .dictionary(["a": .bool(true)])) == nil)
        #expect(["a": 1.5].defaultsValue == .dictionary(["a": .double(1.5)]))
        #expect([[1], []].defaultsValue == .array([.array([.integer(1)]), .array([])]))
        #expect(DefaultsValue(defaultsValue: .integer(1)) == .integer(1))
        #expect(DefaultsValue.bool(true).defaultsValue == .bool(true))
    }
}
