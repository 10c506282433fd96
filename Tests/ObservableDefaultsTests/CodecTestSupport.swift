import Foundation
@testable import ObservableDefaults
import TestSupport

/// Generates random values of every case, with the awkward corners over-represented.
struct ValueGenerator {
    var random: SeededGenerator
    var includeNonFinite: Bool

    static let specialDoubles: [Double] = [
        0, -0.0, 5, 5.5, -1, 0.1, 1e300, -1e300, .leastNonzeroMagnitude, 1e-5, 1e16, 1e21, 1.2345678901234568e20,
        .greatestFiniteMagnitude, .leastNormalMagnitude, .pi
    ]
    static let specialIntegers: [Int] = [0, 1, -1, .min, .max, .min + 1, .max - 1, 9_007_199_254_740_993]
    static let specialStrings: [String] = [
        "", " ", "plain", "with \"quotes\"", "back\\slash", "tab\there", "line\nbreak", "cr\r\nlf", "\u{1}\u{1F}\u{7F}",
        "é", "e\u{301}", "👩‍👩‍👧", "日本語", "<tag>&amp;", "]]>", "/slash", "\u{2028}", "  padded  ", "NaN", "true", "null"
    ]
    static let keyAlphabet: [Character] = Array("abcXYZ019_.-é日🎉 \"\\/")

    init(seed: UInt64, includeNonFinite: Bool) {
        random = SeededGenerator(seed: seed)
        self.includeNonFinite = includeNonFinite
    }

    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }

    mutating func value(depth: Int) -> DefaultsValue {
        let kinds = depth >= 4 ? 6 : 8
        switch int(0..<kinds) {
        case 0: return .string(string())
        case 1:
            return .integer(
                int(0..<3) == 0
                    ? Self.specialIntegers.randomElement(using: &random)! : Int(truncatingIfNeeded: random.next()))
        case 2: return .double(double())
        case 3: return .bool(int(0..<2) == 0)
        case 4:
            let seconds = Double.random(in: -2_208_988_800...7_258_118_400, using: &random)  // 1900...2200
            return .date(Date(timeIntervalSince1970: int(0..<4) == 0 ? seconds.rounded() : seconds))
        case 5:
            let count = int(0..<4) == 0 ? 0 : int(0..<64)
            return .data(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 6:
            return .array((0..<int(0..<5)).map { _ in value(depth: depth + 1) })
        default:
            var dictionary: [String: DefaultsValue] = [:]
            for _ in 0..<int(0..<5) { dictionary[key()] = value(depth: depth + 1) }
            return .dictionary(dictionary)
        }
    }

    mutating func double() -> Double {
        switch int(0..<6) {
        case 0: return Self.specialDoubles.randomElement(using: &random)!
        case 1 where includeNonFinite: return [Double.nan, .infinity, -.infinity].randomElement(using: &random)!
        case 2: return Double(int(-1000..<1000))
        default:
            var double: Double
            repeat { double = Double(bitPattern: random.next()) } while !double.isFinite
            return double
        }
    }

    mutating func string() -> String {
        if int(0..<3) == 0 { return Self.specialStrings.randomElement(using: &random)! }
        var scalars = String.UnicodeScalarView()
        for _ in 0..<int(0..<12) {
            switch int(0..<5) {
            case 0: scalars.append(Unicode.Scalar(UInt8(int(0..<0x20))))
            case 1: scalars.append(Unicode.Scalar(UInt32(int(0x80..<0xD800)))!)
            case 2: scalars.append(Unicode.Scalar(UInt32(int(0x1F300..<0x1FAFF)))!)
            default: scalars.append(Unicode.Scalar(UInt8(int(0x20..<0x7F))))
            }
        }
        return String(scalars)
    }

    mutating func key() -> String {
        String((0..<int(0..<8)).map { _ in Self.keyAlphabet.randomElement(using: &random)! })
    }
}

/// Locates files under the package's `Fixtures/` directory from this source file's path.
enum Fixtures {
    static func url(_ relativePath: String, filePath: String = #filePath) -> URL {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            let parent = directory.deletingLastPathComponent()
            precondition(parent.path != directory.path, "package root not found above \(filePath)")
            directory = parent
        }
        return directory.appendingPathComponent("Fixtures").appendingPathComponent(relativePath)
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }
}

/// Parses JSON text as a suite file and returns the error it throws, if any.
func jsonError(_ text: String) -> DefaultsError? {
    do {
        _ = try SuiteFormat.json.decode(Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/test.json"))
        return nil
    } catch {
        return error
    }
}

/// Parses JSON text as a suite file.
func parseJSON(_ text: String) throws -> [String: DefaultsValue] {
    try SuiteFormat.json.decode(Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/test.json")).stringKeyed
}

/// Encodes a suite as JSON text.
func jsonText(_ values: [String: DefaultsValue]) throws -> String {
    String(decoding: try SuiteFormat.json.encode(values.exactKeyed), as: UTF8.self)
}

/// The edits both incremental re-read property tests (JSON and XML plist) make to a document's top-level
/// members: `choice` 0…2 changes a value, 3 inserts, 4 removes, 5 moves, 6 shuffles. Returns `false` when
/// `choice` is none of these or cannot apply to `members` (too few), so the caller makes its own edit.
func applyMemberEdit(
    _ choice: Int, to members: inout [(key: String, value: String)], _ random: inout SeededGenerator,
    key: (inout SeededGenerator) -> String, value: (inout SeededGenerator) -> String
) -> Bool {
    let count = members.count
    switch choice {
    case 0...2 where count > 0:
        members[random.int(0...count - 1)].value = value(&random)
    case 3:
        members.insert((key(&random), value(&random)), at: random.int(0...count))
    case 4 where count > 0:
        members.remove(at: random.int(0...count - 1))
    case 5 where count > 1:
        let member = members.remove(at: random.int(0...count - 1))
        members.insert(member, at: random.int(0...count - 1))
    case 6 where count > 1:
        members.shuffle(using: &random)
    default:
        return false
    }
    return true
}
