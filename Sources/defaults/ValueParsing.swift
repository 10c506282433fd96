import Foundation
import Synchronization
import ObservableDefaults

/// The type flags of `defaults write` for a single value.
enum ScalarType: String, CaseIterable {
    case string, integer, float, boolean, date, data

    /// The flag spellings accepted for each type (`-int` and `-integer`, `-bool` and `-boolean`, ...).
    init?(flag: String) {
        switch flag {
        case "-string": self = .string
        case "-int", "-integer": self = .integer
        case "-float", "-double", "-real": self = .float
        case "-bool", "-boolean": self = .boolean
        case "-date": self = .date
        case "-data": self = .data
        default: return nil
        }
    }

    var flag: String {
        switch self {
        case .string: "-string"
        case .integer: "-int"
        case .float: "-float"
        case .boolean: "-bool"
        case .date: "-date"
        case .data: "-data"
        }
    }

    /// Parses `text` as a value of this type, or throws a message saying what was expected.
    func parse(_ text: String) throws(ToolError) -> DefaultsValue {
        func malformed(_ expected: String) -> ToolError {
            ToolError("malformed value '\(text)' for \(flag): expected \(expected)")
        }
        switch self {
        case .string:
            return .string(text)
        case .integer:
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw malformed("an integer between \(Int.min) and \(Int.max)")
            }
            return .integer(value)
        case .float:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let value = Double(trimmed), value.isFinite else {
                throw malformed("a finite number such as 1.5 or -2e3")
            }
            return .double(value)
        case .boolean:
            switch text.lowercased() {
            case "yes", "true", "1": return .bool(true)
            case "no", "false", "0": return .bool(false)
            default: throw malformed("YES, NO, true, false, 1 or 0")
            }
        case .date:
            guard let date = DateText.parse(text) else {
                throw malformed("an ISO 8601 date such as 2024-05-01T12:30:00Z or 2024-05-01 12:30:00 +0000")
            }
            return .date(date)
        case .data:
            guard let data = Self.parseHex(text) else {
                throw malformed("hexadecimal bytes such as 0a1bff (an even number of hex digits)")
            }
            return .data(data)
        }
    }

    /// Hex digits, optionally wrapped in `<...>`, prefixed with `0x`, or separated by spaces.
    private static func parseHex(_ text: String) -> Data? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.hasPrefix("<") && digits.hasSuffix(">") { digits = digits.dropFirst().dropLast() }
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let nibbles = digits.filter { !$0.isWhitespace }.map { $0.hexDigitValue }
        guard nibbles.count % 2 == 0, !nibbles.contains(nil) else { return nil }
        var bytes = Data(capacity: nibbles.count / 2)
        var index = 0
        while index < nibbles.count {
            bytes.append(UInt8(nibbles[index]! << 4 | nibbles[index + 1]!))
            index += 2
        }
        return bytes
    }
}

/// What `defaults write suite key ...` should do with the key.
enum WriteAction: Equatable {
    /// Store this value (replacing any old one).
    case set(DefaultsValue)
    /// Append these items to the array stored under the key (an absent key starts empty).
    case arrayAdd([DefaultsValue])
    /// Merge these entries into the dictionary stored under the key (an absent key starts empty).
    case dictAdd([String: DefaultsValue])

    /// Parses the arguments after the key: a bare value (old-style or XML property-list text, else a
    /// string; see ``PropertyListText``), a type flag and its value, or a collection flag followed by items
    /// (each item may have its own type flag; untyped items are strings).
    init(arguments: [String]) throws(ToolError) {
        guard let first = arguments.first else {
            throw .usage("missing value; usage: defaults write suite key [type flag] value", verb: "write")
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-array":
            self = .set(.array(try Self.items(rest, flag: first)))
        case "-array-add":
            self = .arrayAdd(try Self.items(rest, flag: first))
        case "-dict":
            self = .set(.dictionary(try Self.entries(rest, flag: first)))
        case "-dict-add":
            self = .dictAdd(try Self.entries(rest, flag: first))
        default:
            if arguments.count == 1, !Self.looksLikeFlag(first) {
                // A bare value: property-list text as on macOS, else a string.
                self = .set(try PropertyListText.value(of: first))
                return
            }
            var cursor = ArraySlice(arguments)
            let value = try Self.scalar(&cursor)
            if let extra = cursor.first {
                throw .usage(
                    "unexpected argument '\(extra)' after the value (use -array or -dict for several values)",
                    verb: "write")
            }
            self = .set(value)
        }
    }

    /// One value at the cursor: `-type value` or a bare string.
    private static func scalar(_ cursor: inout ArraySlice<String>) throws(ToolError) -> DefaultsValue {
        guard let token = cursor.popFirst() else { throw .usage("missing value", verb: "write") }
        if let type = ScalarType(flag: token) {
            guard let text = cursor.popFirst() else { throw .usage("missing value after \(token)", verb: "write") }
            return try type.parse(text)
        }
        if Self.looksLikeFlag(token) {
            throw .usage(
                "unknown type flag '\(token)' (use -string to store a string starting with '-')", verb: "write")
        }
        return .string(token)
    }

    private static func items(_ arguments: [String], flag: String) throws(ToolError) -> [DefaultsValue] {
        var cursor = ArraySlice(arguments)
        var items: [DefaultsValue] = []
        while !cursor.isEmpty {
            if let token = cursor.first, ["-array", "-array-add", "-dict", "-dict-add"].contains(token) {
                throw .usage(
                    "\(token) cannot be nested inside \(flag); write nested collections with 'defaults import'",
                    verb: "write")
            }
            items.append(try scalar(&cursor))
        }
        return items
    }

    private static func entries(_ arguments: [String], flag: String) throws(ToolError) -> [String: DefaultsValue] {
        var cursor = ArraySlice(arguments)
        var entries: [String: DefaultsValue] = [:]
        while let key = cursor.popFirst() {
            if looksLikeFlag(key) {
                throw .usage("\(flag) expects a key where '\(key)' is (keys are strings)", verb: "write")
            }
            entries[key] = try value(after: key, &cursor, flag: flag)
        }
        return entries
    }

    private static func value(after key: String, _ cursor: inout ArraySlice<String>, flag: String) throws(ToolError)
        -> DefaultsValue
    {
        guard !cursor.isEmpty else {
            throw .usage("\(flag): key '\(key)' has no value (give key value pairs)", verb: "write")
        }
        if let token = cursor.first, ["-array", "-array-add", "-dict", "-dict-add"].contains(token) {
            throw .usage(
                "\(token) cannot be nested inside \(flag); write nested collections with 'defaults import'",
                verb: "write")
        }
        return try scalar(&cursor)
    }

    /// `-word` is a flag; `-5`, `-1.5` and `-` are values.
    static func looksLikeFlag(_ token: String) -> Bool {
        guard token.hasPrefix("-"), let second = token.dropFirst().first else { return false }
        return second.isLetter
    }
}

/// Dates as the tool reads and prints them.
enum DateText {
    /// ISO 8601 (`2024-05-01T12:30:00Z`, with fractional seconds or an offset), the tool's own human form
    /// (`2024-05-01 12:30:00 +0000`), or a day (`2024-05-01`, midnight UTC).
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        return formatters.withLock { formatters in
            [formatters.fraction, formatters.whole, formatters.day].lazy.compactMap { $0.date(from: text) }.first
        }
    }

    /// `2024-05-01T12:30:00.250Z`: ISO 8601 in UTC with milliseconds (the form JSON suites store).
    static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `12:30:00.250`: the local time of day to the nearest millisecond, as `watch` prints it (the text a
    /// `DateFormatter` with `HH:mm:ss.SSS` gives). Made with `localtime_r`: building a `DateFormatter` per
    /// line was most of `watch`'s time (83 µs a line).
    static func timeOfDay(_ date: Date) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(total >= 0 ? total / 1000 : (total - 999) / 1000)
        let milliseconds = Int(total - Int64(seconds) * 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "--:--:--.---" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction =
            milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)"
    }

    /// `2024-05-01 12:30:00 +0000`, with `.250` after the seconds when the date has a fraction.
    static func human(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let whole = seconds == seconds.rounded(.down)
        return formatters.withLock { whole ? $0.whole.string(from: date) : $0.fraction.string(from: date) }
    }

    /// The formatters of ``human(_:)`` and ``parse(_:)``, made once: one per date was most of what `read`
    /// spent on a suite of dates (5,000 dates: 0.26 s).
    private static let formatters = Mutex(Formatters())

    private final class Formatters {
        let whole = utcFormatter("yyyy-MM-dd HH:mm:ss Z")
        let fraction = utcFormatter("yyyy-MM-dd HH:mm:ss.SSS Z")
        let day = utcFormatter("yyyy-MM-dd")

        private static func utcFormatter(_ format: String) -> DateFormatter {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            return formatter
        }
    }
}
