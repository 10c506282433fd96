import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct ValueCodableTests {
    enum Theme: String, Codable, Equatable { case light, dark }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rectangle(width: Int, height: Int)
        case labelled(String, Int)
        case none
    }

    struct Window: Codable, Equatable {
        var width: Int
        var height: Int
        var title: String?
    }

    struct Settings: Codable, Equatable {
        var name: String
        var workers: Int
        var ratio: Double
        var enabled: Bool
        var theme: Theme
        var shape: Shape
        var shapes: [Shape]
        var window: Window
        var windows: [Window]
        var nickname: String?
        var created: Date
        var blob: Data
        var endpoint: URL
        var tags: [String: Int]
        var matrix: [[Int]]
        var small: UInt8
        var huge: UInt64
        var float: Float
    }

    static let sample = Settings(
        name: "daemon", workers: 4, ratio: 5, enabled: true, theme: .dark, shape: .circle(radius: 2.5),
        shapes: [.rectangle(width: 1, height: 2), .labelled("x", 3), .none],
        window: Window(width: 800, height: 600, title: nil), windows: [Window(width: 1, height: 2, title: "t")],
        nickname: nil, created: Date(timeIntervalSince1970: 1_714_566_600.5), blob: Data([1, 2, 3]),
        endpoint: URL(string: "https://example.com/a?b=c")!, tags: ["a": 1, "b": 2], matrix: [[1, 2], [], [3]],
        small: 255, huge: .max, float: 1.5)

    @Test func encodesANaturalNestedStructure() throws {
        let value = try DefaultsValueEncoder().encode(Self.sample)
        guard case .dictionary(let dictionary) = value else {
            Issue.record("expected a dictionary, got \(value)")
            return
        }
        #expect(dictionary["name"] == .string("daemon"))
        #expect(dictionary["workers"] == .integer(4))
        #expect(dictionary["ratio"] == .double(5))
        #expect(dictionary["enabled"] == .bool(true))
        #expect(dictionary["theme"] == .string("dark"))
        #expect(dictionary["shape"] == .dictionary(["circle": .dictionary(["radius": .double(2.5)])]))
        #expect(dictionary["window"] == .dictionary(["width": .integer(800), "height": .integer(600)]))
        #expect(dictionary["nickname"] == nil)
        #expect(dictionary["created"] == .date(Date(timeIntervalSince1970: 1_714_566_600.5)))
        #expect(dictionary["blob"] == .data(Data([1, 2, 3])))
        #expect(dictionary["endpoint"] == .string("https://example.com/a?b=c"))
        #expect(dictionary["tags"] == .dictionary(["a": .integer(1), "b": .integer(2)]))
        #expect(dictionary["matrix"] == .array([.array([.integer(1), .integer(2)]), .array([]), .array([.integer(3)])]))
        #expect(dictionary["huge"] == .string("18446744073709551615"))
        #expect(dictionary["float"] == .double(1.5))
    }

    @Test func roundTripsDirectlyAndThroughBothFileFormats() throws {
        let value = try DefaultsValueEncoder().encode(Self.sample)
        #expect(try DefaultsValueDecoder().decode(Settings.self, from: value) == Self.sample)
        for format in SuiteFormat.allCases {
            let stored = try format.decode(try format.encode(["s": value]), fileURL: URL(fileURLWithPath: "/tmp/x"))
            let decoded = try DefaultsValueDecoder().decode(Settings.self, from: try #require(stored["s"]))
            var expected = Self.sample
            if format == .propertyList { expected.created = Date(timeIntervalSince1970: 1_714_566_600) }
            #expect(decoded == expected, "\(format)")
        }
    }

    @Test func decodesAHandWrittenDictionaryLeniently() throws {
        let values = try parseJSON(
            """
            {"width": 3.0, "height": 4}
            """)
        #expect(
            try DefaultsValueDecoder().decode(Window.self, from: .dictionary(values))
                == Window(width: 3, height: 4, title: nil))

        struct Mixed: Codable, Equatable {
            var ratio: Double
            var when: Date
            var bytes: Data
            var link: URL
        }
        let mixed = try DefaultsValueDecoder().decode(
            Mixed.self,
            from: .dictionary([
                "ratio": .integer(2), "when": .string("2024-05-01T12:30:00.250Z"), "bytes": .string("AQID"),
                "link": .string("file:///tmp/x")
            ]))
        #expect(
            mixed
                == Mixed(
                    ratio: 2, when: Date(timeIntervalSince1970: 1_714_566_600.25), bytes: Data([1, 2, 3]),
                    link: URL(string: "file:///tmp/x")!))
    }

    @Test func typeMismatchNamesTheCodingPath() throws {
        let value: DefaultsValue = .dictionary([
            "windows": .array([.dictionary(["width": .string("wide"), "height": .integer(1)])])
        ])
        struct Holder: Codable { var windows: [Window] }
        do {
            _ = try DefaultsValueDecoder().decode(Holder.self, from: value)
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["windows", "Index 0", "width"])
            #expect(context.debugDescription == "expects an integer, found the string \"wide\"")
        }
    }

    @Test func missingKeyAndOutOfRangeIntegerThrow() throws {
        #expect(throws: DecodingError.self) {
            try DefaultsValueDecoder().decode(Window.self, from: .dictionary(["width": .integer(1)]))
        }
        struct Small: Codable { var small: UInt8 }
        #expect(throws: DecodingError.self) {
            try DefaultsValueDecoder().decode(Small.self, from: .dictionary(["small": .integer(256)]))
        }
        #expect(throws: DecodingError.self) {
            try DefaultsValueDecoder().decode(Small.self, from: .dictionary(["small": .bool(true)]))
        }
        #expect(throws: DecodingError.self) { try DefaultsValueDecoder().decode(Small.self, from: .array([])) }
    }

    @Test func topLevelValuesAndCollections() throws {
        #expect(try DefaultsValueEncoder().encode(5) == .integer(5))
        #expect(try DefaultsValueEncoder().encode([1.5, 2]) == .array([.double(1.5), .double(2)]))
        #expect(try DefaultsValueEncoder().encode(["a": [true]]) == .dictionary(["a": .array([.bool(true)])]))
        #expect(try DefaultsValueDecoder().decode([Int].self, from: .array([.integer(1), .double(2)])) == [1, 2])
        #expect(try DefaultsValueDecoder().decode(Int?.self, from: .integer(3)) == 3)
        #expect(throws: EncodingError.self) { try DefaultsValueEncoder().encode([1, nil] as [Int?]) }
        #expect(throws: EncodingError.self) { try DefaultsValueEncoder().encode(Int?.none) }
    }

    final class Base: Codable {
        var id = 0
        init(id: Int) { self.id = id }
    }

    final class Derived: Codable, Equatable {
        var base: Base
        var extra: String
        enum CodingKeys: String, CodingKey { case extra }

        init(id: Int, extra: String) {
            base = Base(id: id)
            self.extra = extra
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            extra = try container.decode(String.self, forKey: .extra)
            base = try Base(from: container.superDecoder())
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(extra, forKey: .extra)
            try base.encode(to: container.superEncoder())
        }

        static func == (lhs: Derived, rhs: Derived) -> Bool { lhs.base.id == rhs.base.id && lhs.extra == rhs.extra }
    }

    @Test func superEncoderNestsUnderSuper() throws {
        let value = try DefaultsValueEncoder().encode(Derived(id: 7, extra: "e"))
        #expect(value == .dictionary(["extra": .string("e"), "super": .dictionary(["id": .integer(7)])]))
        #expect(try DefaultsValueDecoder().decode(Derived.self, from: value) == Derived(id: 7, extra: "e"))
    }

    @Test func readsTheAppleLibraryFormOfJSONData() throws {
        let json = try JSONEncoder().encode(Window(width: 3, height: 4, title: "w"))
        #expect(
            try DefaultsValueDecoder().decode(Window.self, from: .data(json)) == Window(width: 3, height: 4, title: "w")
        )
        #expect(
            try DefaultsValueDecoder().decode(Window.self, from: .string(json.base64EncodedString()))
                == Window(width: 3, height: 4, title: "w"))
        #expect(throws: DecodingError.self) {
            try DefaultsValueDecoder().decode(Window.self, from: .data(Data("nope".utf8)))
        }
        // A tree that decodes is never reinterpreted.
        #expect(try DefaultsValueDecoder().decode(Data.self, from: .string("AQID")) == Data([1, 2, 3]))
    }
}
