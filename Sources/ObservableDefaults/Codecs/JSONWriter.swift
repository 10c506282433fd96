import Foundation

/// Writes the value model as pretty-printed JSON: two-space indentation, `"key": value`, keys sorted by
/// Swift `String` ordering (`<`, which compares Unicode scalars after canonical normalisation), empty
/// containers as `{}` and `[]`, and a newline at the end.
///
/// Doubles always keep a `.` or an exponent so they read back as doubles, and use Swift's shortest
/// round-tripping representation; non-finite doubles are written as `NaN`, `Infinity` and `-Infinity`.
/// Dates and data, which JSON cannot hold, are written in their normalised string form (see
/// ``JSONRepresentation``), so encoding a value gives the same bytes as encoding its normalised form.
struct JSONWriter {
    private var output: [UInt8] = []

    /// Serialises a suite's top-level dictionary.
    static func encodeSuite(_ values: [String: DefaultsValue]) -> Data {
        var writer = JSONWriter()
        writer.output.reserveCapacity(64 * values.count + 4)
        writer.writeDictionary(values, indent: 0)
        writer.output.append(UInt8(ascii: "\n"))
        return Data(writer.output)
    }

    private mutating func write(_ value: DefaultsValue, indent: Int) {
        switch value {
        case .string(let string): writeString(string)
        case .integer(let integer): append(String(integer))
        case .double(let double): append(Self.text(for: double))
        case .bool(let bool): append(bool ? "true" : "false")
        case .date(let date): writeString(JSONRepresentation.string(for: date))
        case .data(let data): writeString(JSONRepresentation.string(for: data))
        case .array(let array): writeArray(array, indent: indent)
        case .dictionary(let dictionary): writeDictionary(dictionary, indent: indent)
        }
    }

    private mutating func writeDictionary(_ dictionary: [String: DefaultsValue], indent: Int) {
        if dictionary.isEmpty {
            append("{}")
            return
        }
        append("{\n")
        var first = true
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            if !first { append(",\n") }
            first = false
            writeIndent(indent + 1)
            writeString(key)
            append(": ")
            write(value, indent: indent + 1)
        }
        append("\n")
        writeIndent(indent)
        append("}")
    }

    private mutating func writeArray(_ array: [DefaultsValue], indent: Int) {
        if array.isEmpty {
            append("[]")
            return
        }
        append("[\n")
        for (offset, element) in array.enumerated() {
            if offset > 0 { append(",\n") }
            writeIndent(indent + 1)
            write(element, indent: indent + 1)
        }
        append("\n")
        writeIndent(indent)
        append("]")
    }

    private mutating func writeIndent(_ level: Int) {
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    private mutating func writeString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0..<0x20: append("\\u" + String(byte, radix: 16, uppercase: true).leftPadded(to: 4))
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private mutating func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    /// The JSON text of a double: Swift's shortest round-tripping digits, with a `.0` added when they
    /// would otherwise read back as an integer, and leading zeros dropped from the exponent (`1e-05` →
    /// `1e-5`).
    static func text(for double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-Infinity" : "Infinity" }
        var text = double.description
        if let e = text.firstIndex(of: "e") {
            var mantissa = String(text[..<e])
            var exponent = text[text.index(after: e)...]
            var sign = ""
            if let first = exponent.first, first == "-" || first == "+" {
                sign = first == "-" ? "-" : ""
                exponent = exponent.dropFirst()
            }
            let digits = exponent.drop(while: { $0 == "0" })
            if mantissa.hasSuffix(".0") { mantissa.removeLast(2) }
            text = mantissa + "e" + sign + (digits.isEmpty ? "0" : String(digits))
        } else if !text.contains(".") {
            text += ".0"
        }
        return text
    }
}
