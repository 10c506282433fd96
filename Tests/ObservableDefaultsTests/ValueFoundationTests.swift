import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct ValueFoundationTests {
    @Test func nsNumbersKeepBooleansApartFromNumbers() {
        #expect(DefaultsValue(any: NSNumber(value: true)) == .bool(true))
        #expect(DefaultsValue(any: NSNumber(value: false)) == .bool(false))
        #expect(DefaultsValue(any: NSNumber(value: 1)) == .integer(1))
        #expect(DefaultsValue(any: NSNumber(value: 0)) == .integer(0))
        #expect(DefaultsValue(any: NSNumber(value: Int8(1))) == .integer(1))
        #expect(DefaultsValue(any: NSNumber(value: 1.5)) == .double(1.5))
        #expect(DefaultsValue(any: NSNumber(value: 5.0)) == .double(5))
        #expect(DefaultsValue(any: NSNumber(value: Float(0.5))) == .double(0.5))
        #expect(DefaultsValue(any: NSNumber(value: UInt64.max)) == .string("18446744073709551615"))
        #expect(DefaultsValue(any: NSNumber(value: UInt32.max)) == .integer(Int(UInt32.max)))
        #expect(DefaultsValue(any: NSNumber(value: Int.min)) == .integer(.min))
    }

    @Test func swiftScalarsConvertToTheMatchingCase() {
        #expect(DefaultsValue(any: true) == .bool(true))
        #expect(DefaultsValue(any: 1) == .integer(1))
        #expect(DefaultsValue(any: 1.0) == .double(1))
        #expect(DefaultsValue(any: Float(2.5)) == .double(2.5))
        #expect(DefaultsValue(any: Int8(-8)) == .integer(-8))
        #expect(DefaultsValue(any: Int16(16)) == .integer(16))
        #expect(DefaultsValue(any: Int32(32)) == .integer(32))
        #expect(DefaultsValue(any: Int64(64)) == .integer(64))
        #expect(DefaultsValue(any: UInt8(8)) == .integer(8))
        #expect(DefaultsValue(any: UInt16(16)) == .integer(16))
        #expect(DefaultsValue(any: UInt32(32)) == .integer(32))
        #expect(DefaultsValue(any: UInt(7)) == .integer(7))
        #expect(DefaultsValue(any: UInt64.max) == .string("18446744073709551615"))
        #expect(UInt64(defaultsValue: DefaultsValue(any: UInt64.max)!) == .max)
        #expect(DefaultsValue(any: "s") == .string("s"))
        #expect(DefaultsValue(any: NSString(string: "ns")) == .string("ns"))
        #expect(DefaultsValue(any: Date(timeIntervalSince1970: 1)) == .date(Date(timeIntervalSince1970: 1)))
        #expect(DefaultsValue(any: NSDate(timeIntervalSince1970: 2)) == .date(Date(timeIntervalSince1970: 2)))
        #expect(DefaultsValue(any: Data([1])) == .data(Data([1])))
        #expect(DefaultsValue(any: NSData(data: Data([2]))) == .data(Data([2])))
        #expect(DefaultsValue(any: URL(string: "https://e.com/x")!) == .string("https://e.com/x"))
        #expect(DefaultsValue(any: DefaultsValue.integer(9)) == .integer(9))
        #expect(DefaultsValue(any: Optional(NSNumber(value: 1)) as Any) == .integer(1))
        #expect(DefaultsValue(any: Optional(Optional(true)) as Any) == .bool(true))
        #expect(DefaultsValue(any: Optional<Int>.none as Any) == nil)
    }

    @Test func collectionsConvertRecursivelyAndRejectForeignValues() {
        #expect(DefaultsValue(any: [1, "a", true] as [Any]) == .array([.integer(1), .string("a"), .bool(true)]))
        #expect(
            DefaultsValue(any: ["a": [1.5], "b": ["c": false]] as [String: Any])
                == .dictionary(["a": .array([.double(1.5)]), "b": .dictionary(["c": .bool(false)])]))
        #expect(
            DefaultsValue(any: NSDictionary(dictionary: ["a": NSNumber(value: true)]))
                == .dictionary(["a": .bool(true)]))
        #expect(DefaultsValue(any: NSArray(array: [NSNumber(value: 2)])) == .array([.integer(2)]))
        #expect(DefaultsValue(any: [1: "x"] as [Int: String]) == nil)
        #expect(DefaultsValue(any: [NSObject()] as [Any]) == nil)
        #expect(DefaultsValue(any: NSObject()) == nil)
    }

    @Test func foundationObjectsAreTheUserDefaultsTypes() throws {
        #expect(DefaultsValue.string("s").foundationObject as? String == "s")
        #expect(DefaultsValue.integer(3).foundationObject as? Int == 3)
        #expect(DefaultsValue.double(2.5).foundationObject as? Double == 2.5)
        #expect(DefaultsValue.bool(true).foundationObject as? Bool == true)
        #expect(
            DefaultsValue.date(Date(timeIntervalSince1970: 5)).foundationObject as? Date
                == Date(timeIntervalSince1970: 5))
        #expect(DefaultsValue.data(Data([1])).foundationObject as? Data == Data([1]))
        let array = try #require(DefaultsValue.array([.integer(1), .string("a")]).foundationObject as? [Any])
        #expect(array.count == 2)
        #expect(array[0] as? Int == 1)
        let dictionary = try #require(
            DefaultsValue.dictionary(["k": .dictionary(["n": .bool(false)])]).foundationObject as? [String: Any])
        #expect((dictionary["k"] as? [String: Any])?["n"] as? Bool == false)
    }

    @Test func foundationObjectRoundTripsThroughInitAny() {
        var generator = ValueGenerator(seed: 7, includeNonFinite: true)
        for _ in 0..<500 {
            let value = generator.value(depth: 1)
            #expect(DefaultsValue(any: value.foundationObject) == value)
        }
    }
}
