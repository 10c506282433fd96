import Foundation
import ObservableDefaults

/// Renders values for people, in the style of macOS `defaults read` (an old-style property list):
/// strings bare when they are simple words and quoted otherwise, booleans as `1`/`0`, dates as
/// `2024-05-01 12:30:00 +0000`, data as `{length = 2, bytes = 0x0aff}`, arrays as `( ... )` and
/// dictionaries as `{ key = value; }` with sorted keys.
enum HumanFormat {
    /// A value on its own, as `defaults read suite key` prints it: a top-level string or date is printed
    /// without quotes, as macOS does.
    static func topLevel(_ value: DefaultsValue) -> String {
        switch value {
        case .string(let text): text
        case .date(let date): DateText.human(date)
        default: render(value, indent: 0)
        }
    }

    static func render(_ value: DefaultsValue, indent: Int) -> String {
        let pad = String(repeating: "    ", count: indent)
        let inner = String(repeating: "    ", count: indent + 1)
        switch value {
        case .string(let text): return quoted(text)
        case .integer(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return flag ? "1" : "0"
        case .date(let date): return quoted(DateText.human(date))
        case .data(let bytes): return "{length = \(bytes.count), bytes = 0x\(hex(bytes))}"
        case .array(let items):
            if items.isEmpty { return "(\n\(pad))" }
            let lines = items.map { inner + render($0, indent: indent + 1) }
            return "(\n" + lines.joined(separator: ",\n") + "\n\(pad))"
        case .dictionary(let entries):
            if entries.isEmpty { return "{\n\(pad)}" }
            var text = "{\n"
            for key in entries.keys.sorted() {
                text += "\(inner)\(quoted(key)) = \(render(entries[key]!, indent: indent + 1));\n"
            }
            return text + "\(pad)}"
        }
    }

    /// The value on one line (for `watch`): `(1, 2)`, `{a = 1; b = x;}`.
    static func inline(_ value: DefaultsValue) -> String {
        switch value {
        case .array(let items): return "(" + items.map(inline).joined(separator: ", ") + ")"
        case .dictionary(let entries):
            return "{" + entries.keys.sorted().map { "\(quoted($0)) = \(inline(entries[$0]!));" }.joined(separator: " ")
                + "}"
        default: return render(value, indent: 0)
        }
    }

    /// A string bare when it is made of letters, digits and `_ . $ : / -` only, else in double quotes
    /// with `"` and `\` and control characters escaped.
    static func quoted(_ text: String) -> String {
        let bare =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "_.$:/-".unicodeScalars.contains(scalar))
            }
        if bare { return text }
        return QuotedText.quoted(text, controlEscape: "\\U")
    }

    static func hex(_ bytes: Data) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// Renders values as JSON for `--json`: numbers keep their kind (a double always has a `.` or an
/// exponent), dates are ISO 8601 UTC strings with milliseconds, data is a base64 string, keys are sorted.
/// Non-finite doubles, which JSON cannot hold, are written as the strings `"nan"`, `"inf"`, `"-inf"`.
enum JSONFormat {
    /// Pretty output (two-space indent) or, with `pretty: false`, one line.
    static func render(_ value: DefaultsValue, pretty: Bool = true) -> String {
        var output = ""
        write(value, to: &output, indent: pretty ? 0 : nil)
        return output
    }

    static func object(_ entries: [(String, DefaultsValue)], pretty: Bool = true) -> String {
        // Keeps the given order (for event lines, where `time` reads best first).
        guard !pretty else {
            return render(.dictionary(Dictionary(entries, uniquingKeysWith: { $1 })), pretty: true)
        }
        var output = "{"
        for (index, (key, value)) in entries.enumerated() {
            if index > 0 { output += "," }
            output += string(key) + ":"
            write(value, to: &output, indent: nil)
        }
        return output + "}"
    }

    private static func write(_ value: DefaultsValue, to output: inout String, indent: Int?) {
        let newline = indent == nil ? "" : "\n"
        let pad = String(repeating: "  ", count: indent ?? 0)
        let inner = String(repeating: "  ", count: (indent ?? 0) + 1)
        let innerPad = indent == nil ? "" : inner
        let separator = indent == nil ? ":" : ": "
        switch value {
        case .string(let text): output += string(text)
        case .integer(let number): output += String(number)
        case .double(let number): output += double(number)
        case .bool(let flag): output += flag ? "true" : "false"
        case .date(let date): output += string(DateText.iso8601(date))
        case .data(let bytes): output += string(bytes.base64EncodedString())
        case .array(let items):
            if items.isEmpty { output += "[]"; return }
            output += "[" + newline
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," + newline }
                output += innerPad
                write(item, to: &output, indent: indent.map { $0 + 1 })
            }
            output += newline + (indent == nil ? "" : pad) + "]"
        case .dictionary(let entries):
            if entries.isEmpty { output += "{}"; return }
            output += "{" + newline
            for (index, key) in entries.keys.sorted().enumerated() {
                if index > 0 { output += "," + newline }
                output += innerPad + string(key) + separator
                write(entries[key]!, to: &output, indent: indent.map { $0 + 1 })
            }
            output += newline + (indent == nil ? "" : pad) + "}"
        }
    }

    static func double(_ number: Double) -> String {
        if number.isNaN { return "\"nan\"" }
        if number.isInfinite { return number < 0 ? "\"-inf\"" : "\"inf\"" }
        let text = String(number)
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
    }

    static func string(_ text: String) -> String {
        QuotedText.quoted(text, controlEscape: "\\u")
    }
}

/// The double-quoted form both output formats share: `"` and `\` escaped with a backslash, `\n`, `\t`, `\r`,
/// and any other control character as `controlEscape` followed by four hex digits.
enum QuotedText {
    /// `text` in double quotes with escapes.
    /// - Parameters:
    ///   - text: The text to quote.
    ///   - controlEscape: What precedes the hex digits of another control character: `\U` in old-style
    ///     property lists, `\u` in JSON.
    /// - Returns: The quoted text.
    static func quoted(_ text: String, controlEscape: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            default:
                if scalar.value < 0x20 {
                    escaped += controlEscape + String(format: "%04x", scalar.value)
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped + "\""
    }
}
