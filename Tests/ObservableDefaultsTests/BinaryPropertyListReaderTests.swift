import Foundation
import Testing
@testable import ObservableDefaults

/// The bounded binary property-list reader: what it reads (compared with Foundation on files Foundation
/// wrote), and the exact error for every kind of damage.
@Suite struct BinaryPropertyListReaderTests {
    static let fileURL = URL(fileURLWithPath: "/tmp/b.plist")

    func read(_ data: Data) throws -> DefaultsValue {
        try BinaryPropertyListReader.parse(data, fileURL: Self.fileURL)
    }

    func readError(_ data: Data) throws -> DefaultsError {
        let error = try #require(throws: DefaultsError.self) { try read(data) }
        #expect(error.kind == .malformedFile)
        #expect(error.fileURL == Self.fileURL)
        return error
    }

    /// A binary property list of these objects (1-byte offsets and references unless told).
    static func bplist(_ objects: [[UInt8]], top: UInt64 = 0, referenceSize: UInt8 = 1, offsetSize: UInt8 = 1) -> Data {
        var body: [UInt8] = []
        var offsets: [Int] = []
        for object in objects {
            offsets.append(8 + body.count)
            body += object
        }
        let tableOffset = UInt64(8 + body.count)
        var table: [UInt8] = []
        for offset in offsets {
            for shift in stride(from: Int(offsetSize) - 1, through: 0, by: -1) {
                table.append(UInt8(truncatingIfNeeded: offset >> (8 * shift)))
            }
        }
        func bigEndian(_ value: UInt64) -> [UInt8] {
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        let trailer =
            [UInt8](repeating: 0, count: 6) + [offsetSize, referenceSize]
            + bigEndian(UInt64(objects.count)) + bigEndian(top) + bigEndian(tableOffset)
        return Data(Array("bplist00".utf8) + body + table + trailer)
    }

    // MARK: Reading

    @Test func readsEveryValueTypeAsFoundationWroteIt() throws {
        let object: [String: Any] = [
            "true": true, "false": false, "small": 7, "negative": -3, "big": Int.max, "min": Int.min, "u16": 40_000,
            "u32": 4_000_000_000, "double": 5.0, "float": Float(1.5), "nan": Double.nan,
            "date": Date(timeIntervalSinceReferenceDate: 123.5),
            "data": Data([0, 1, 2, 255]), "long data": Data(repeating: 7, count: 300), "ascii": "plain",
            "utf16": "Grüß 世界 👋",
            "long": String(repeating: "x", count: 1000), "array": [1, "two", [3.0]], "empty array": [Any](),
            "dictionary": ["nested": ["deeper": true]], "empty dictionary": [String: Any]()
        ]
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let foundation = try #require(
            DefaultsValue(any: PropertyListSerialization.propertyList(from: binary, options: [], format: nil)))
        #expect(try read(binary) == foundation)
        #expect(try read(binary) == DefaultsValue(any: object))
    }

    /// Random suites of every value type, written by Foundation, read exactly as Foundation reads them.
    @Test func agreesWithFoundationOnRandomValues() throws {
        var generator = ValueGenerator(seed: 0xB1A5, includeNonFinite: true)
        for _ in 0..<200 {
            var suite: [String: DefaultsValue] = [:]
            for _ in 0..<generator.int(0..<8) { suite[generator.key()] = generator.value(depth: 0) }
            let binary = try PropertyListSerialization.data(
                fromPropertyList: DefaultsValue.dictionary(suite).foundationObject, format: .binary, options: 0)
            let foundation = try #require(
                DefaultsValue(any: PropertyListSerialization.propertyList(from: binary, options: [], format: nil)))
            #expect(try read(binary) == foundation)
        }
    }

    @Test func unsignedIntegersAboveIntMaxBecomeTheirDecimalString() throws {
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["u": UInt64.max], format: .binary, options: 0)
        #expect(try read(binary) == .dictionary(["u": .string("18446744073709551615")]))
    }

    @Test func sharedStringsAndScalarsAreFine() throws {
        // 300 dictionaries sharing one key and one value, as Apple's writer uniques them.
        var objects: [[UInt8]] = [[0xAF, 0x11, 0x01, 0x2C] + (0..<300).flatMap { _ in [UInt8(0x00), 0x03] }]
        objects.append([0x51, UInt8(ascii: "k")])
        objects.append([0x09])
        objects.append([0xD1, 0x00, 0x01, 0x00, 0x02])
        let data = Self.bplist(objects, referenceSize: 2, offsetSize: 2)
        let value = try read(data)
        #expect(value == .array(Array(repeating: .dictionary(["k": .bool(true)]), count: 300)))
    }

    // MARK: Errors

    @Test func setIsRejectedWithItsObjectAndOffset() throws {
        let data = try Fixtures.data("hostile/set.plist")
        #expect(data.count == 46)
        let error = try readError(data)
        #expect(
            error.message
                == "binary property list, byte offset 8: object 0: unsupported value: set (marker 0xC1); property-list suites hold arrays, not sets"
        )
    }

    @Test func uidNullAndUnknownMarkersAreRejected() throws {
        #expect(
            try readError(Self.bplist([[0x80, 0x01]])).message.contains(
                "object 0: unsupported value: UID (marker 0x80)"))
        #expect(try readError(Self.bplist([[0x00]])).message.contains("object 0: unsupported value: null"))
        #expect(try readError(Self.bplist([[0x70]])).message.contains("object 0: unknown object marker 0x70"))
        #expect(try readError(Self.bplist([[0x0F]])).message.contains("unknown object marker 0x0F"))
    }

    /// Expanded in full it would take longer than anyone waits: the reader stops at its expansion limit and
    /// says so (the message tells "cut off" from "expanded").
    @Test func exponentialExpansionIsCutOff() throws {
        let data = try Fixtures.data("hostile/exponential.plist")
        let error = try readError(data)
        let limit = BinaryPropertyListReader.maximumExpandedValues(fileSize: data.count)
        #expect(error.message.contains("expands to more than \(limit) values"), "\(error.message)")
    }

    @Test func cycleIsReported() throws {
        let error = try readError(try Fixtures.data("hostile/cycle.plist"))
        #expect(
            error.message
                == "binary property list, byte offset 13: object 2: reference cycle: the container contains itself")
    }

    @Test func nestingIsLimitedLikeTheOtherReaders() throws {
        func nested(_ depth: Int) -> Data {
            // Object i is an array holding object i + 1; the last is empty. 2-byte references.
            var objects: [[UInt8]] = []
            for index in 1..<depth {
                let high = UInt8(index >> 8), low = UInt8(index & 0xFF)
                objects.append([0xA1, high, low])
            }
            objects.append([0xA0])
            return Self.bplist(objects, referenceSize: 2, offsetSize: 4)
        }
        _ = try read(nested(512))
        #expect(try readError(nested(513)).message.contains("containers are nested more than 512 levels deep"))
    }

    @Test func truncatedFilesSayWhatIsMissing() throws {
        let truncated = try readError(try Fixtures.data("hostile/truncated.plist"))
        #expect(truncated.message.hasPrefix("binary property list, byte offset "))
        #expect(truncated.message.contains("corrupt trailer"))
        #expect(
            try readError(Data("bplist00".utf8)).message
                == "binary property list: truncated binary property list: 8 bytes, too short for the header and the 32-byte trailer"
        )
        #expect(try readError(Data("bplist".utf8)).message.contains("shorter than the 8-byte header"))
        #expect(
            try readError(Data("bplist01".utf8 + [UInt8](repeating: 0, count: 40))).message.contains(
                "unsupported binary property list version '01'"))
        // A string whose length runs past the object area.
        #expect(
            try readError(Self.bplist([[0x55, 0x41]])).message
                == "binary property list, byte offset 9: object 0: truncated ASCII string: 5 bytes from offset 9 run past the object area (which ends at 10)"
        )
        #expect(
            try readError(Self.bplist([[0x5F, 0x10, 0x40, 0x41]])).message
                == "binary property list, byte offset 9: object 0: length 64 is larger than the file")
        // An 8-byte integer with only two bytes left.
        #expect(
            try readError(Self.bplist([[0x13, 0x01, 0x02]])).message.contains("truncated integer: 8 bytes at offset 9"))
    }

    @Test func corruptTablesAndReferencesAreNamed() throws {
        #expect(
            try readError(try Fixtures.data("hostile/bad-reference.plist")).message
                == "binary property list, byte offset 10: object 0: reference to object 9, but the file has 2 objects")
        var data = Self.bplist([[0x09]])
        data[data.count - 26] = 0  // offset size 0
        #expect(try readError(data).message.contains("corrupt trailer: offset size 0 (expected 1 to 8)"))
        data = Self.bplist([[0x09]])
        data[data.count - 9] = 0xFF  // top object out of range
        #expect(try readError(data).message.contains("corrupt trailer: top object 255 is not one of the 1 objects"))
        data = Self.bplist([[0x09]])
        data[data.count - 1] = 0xF0  // offset table past the end
        #expect(try readError(data).message.contains("does not fit between the header and the trailer"))
        data = Self.bplist([[0x09]])
        data[9] = 0x30  // the offset of object 0 points into the table
        #expect(try readError(data).message.contains("object 0 is at offset 48, outside the object area"))
        // Object counts larger than the file can hold.
        data = Self.bplist([[0x09]])
        data[data.count - 24] = 0xFF
        #expect(try readError(data).message.contains("corrupt trailer: object count"))
    }

    @Test func badStringsAndKeysAreRejected() throws {
        #expect(try readError(Self.bplist([[0x52, 0x41, 0xC3]])).message.contains("byte 0xC3 in an ASCII string"))
        #expect(
            try readError(Self.bplist([[0x61, 0xD8, 0x00]])).message.contains("unpaired surrogate in a UTF-16 string"))
        #expect(
            try readError(Self.bplist([[0xD1, 0x01, 0x01], [0x10, 0x01]])).message.contains(
                "dictionary key 0 is object 1, marker 0x10, not a string"))
        #expect(
            try readError(Self.bplist([[0xD2, 0x01, 0x01, 0x02, 0x02], [0x51, 0x6B], [0x09]])).message.contains(
                "duplicate key 'k' in a dictionary"))
    }

    @Test func topLevelMustBeADictionaryInASuite() throws {
        let error = try #require(throws: DefaultsError.self) {
            try SuiteFormat.propertyList.decode(Self.bplist([[0xA0]]), fileURL: Self.fileURL)
        }
        #expect(error.message == "expected a dictionary at the top level of a suite file, found an array")
    }
}
