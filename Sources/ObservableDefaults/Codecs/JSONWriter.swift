import Foundation

/// Writes the value model as pretty-printed JSON: two-space indentation, `"key": value`, keys sorted by
/// Swift `String` ordering (`<`, which compares Unicode scalars after canonical normalisation), empty
/// containers as `{}` and `[]`, and a newline at the end.
///
/// Doubles always keep a `.` or an exponent so they read back as doubles, and use Swift's shortest
/// round-tripping representation, except where the file they were read from spelled them otherwise (see
/// ``JSONNumberSpellings``): that text is kept. The writer emits only JSON: an infinity is written as
/// `1e999` (which reads back as infinity) unless its file spelled it otherwise; suites refuse to store
/// NaN and infinities (``SuiteFormat/validate(_:forKey:fileURL:)``), so a `NaN` is only ever written back
/// where a file written by an earlier version already held one.
/// Dates and data, which JSON cannot hold, are written in their normalised string form (see
/// ``JSONRepresentation``), so encoding a value gives the same bytes as encoding its normalised form.
struct JSONWriter: ~Copyable {
    /// How the lines of a value are laid out when it is written into a file a person laid out (see
    /// ``JSONSuiteEditor``): the file's line break and indentation, or all on one line.
    struct Layout: Equatable {
        /// `\n`, or `\r\n` in a file with CRLF line breaks.
        var newline: [UInt8] = [0x0A]
        /// One level of indentation: the file's (two spaces, four, a tab…).
        var unit: [UInt8] = [0x20, 0x20]
        /// The indentation of the line the value starts on (its member's).
        var base: [UInt8] = []
        /// Containers on one line: `[1, 2]`, `{"a": 1, "b": 2}`.
        var oneLine = false
    }

    private var output: ByteBuffer
    private var spellings: JSONNumberSpellings
    /// The spellings of the top-level member being written.
    private var memberSpellings: [UInt64: String]?
    /// The layout of nested lines (`nil`: the library's own, two spaces and `\n`).
    private var layout: Layout?

    private init(capacity: Int, spellings: JSONNumberSpellings) {
        output = ByteBuffer(capacity: capacity)
        self.spellings = spellings
    }

    /// The text of a top-level member for a person's file: the quoted key, `colon` (the file's `": "`,
    /// `":"`…) and the value laid out as `layout` says, with the spellings recorded for the key's numbers.
    static func encodeMember(
        key: String, value: DefaultsValue, colon: [UInt8], layout: Layout, spellings: JSONNumberSpellings
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 64, spellings: spellings)
        writer.layout = layout
        writer.memberSpellings = spellings.isEmpty ? nil : spellings.spellings(forKey: key)
        writer.writeString(key)
        colon.withUnsafeBufferPointer { writer.output.append($0) }
        writer.write(value, indent: 0)
        return writer.output.bytes
    }

    /// The text of a value for a person's file, laid out as ``encodeMember(key:value:colon:layout:spellings:)``
    /// lays out a member's value.
    static func encodeValue(
        _ value: DefaultsValue, forKey key: String, layout: Layout, spellings: JSONNumberSpellings
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 32, spellings: spellings)
        writer.layout = layout
        writer.memberSpellings = spellings.isEmpty ? nil : spellings.spellings(forKey: key)
        writer.write(value, indent: 0)
        return writer.output.bytes
    }

    /// Starts the line of a container's member, element or closing bracket at `indent` levels (a space
    /// between members on one line, nothing before a closing bracket).
    private mutating func breakLine(indent: Int, closing: Bool = false) {
        guard let layout else {
            output.append(UInt8(ascii: "\n"))
            output.appendRepeated(UInt8(ascii: " "), count: 2 * indent)
            return
        }
        if layout.oneLine {
            if !closing { output.append(UInt8(ascii: " ")) }
            return
        }
        layout.newline.withUnsafeBufferPointer { output.append($0) }
        layout.base.withUnsafeBufferPointer { output.append($0) }
        for _ in 0..<indent { layout.unit.withUnsafeBufferPointer { output.append($0) } }
    }

    /// Serialises a suite's top-level dictionary.
    static func encodeSuite(_ values: [String: DefaultsValue]) -> Data {
        var entries = SuiteFormat.sortedEntries(of: values)
        return Data(encodeSuiteBytes(&entries, reusing: nil))
    }

    /// Serialises a suite's top-level entries, already sorted by key (the store keeps them sorted, so a
    /// write does not sort the whole suite again). An entry with a `fragment` is copied from `previous`
    /// instead of encoded; every entry's `fragment` is set to where its text is in the result.
    /// `capacity` is the expected size, for example that of the file last written.
    /// `spellings` are the number texts of the file the entries were read from.
    static func encodeSuiteBytes(
        _ entries: inout [SuiteFormat.Entry], reusing previous: [UInt8]?, capacity: Int = 0,
        spellings: JSONNumberSpellings = JSONNumberSpellings()
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: max(capacity, 48 * entries.count + 4), spellings: spellings)
        if entries.isEmpty {
            writer.output.append(UInt8(ascii: "{"), UInt8(ascii: "}"))
        } else {
            (previous ?? []).withUnsafeBufferPointer { previous in
                writer.output.append(UInt8(ascii: "{"))
                for position in entries.indices {
                    if position > 0 { writer.output.append(UInt8(ascii: ",")) }
                    writer.output.append(UInt8(ascii: "\n"))
                    let start = writer.output.count
                    if let fragment = entries[position].fragment, fragment.upperBound <= previous.count {
                        writer.output.append(UnsafeBufferPointer(rebasing: previous[fragment]))
                    } else {
                        writer.memberSpellings =
                            writer.spellings.isEmpty ? nil : writer.spellings.spellings(forKey: entries[position].key)
                        writer.output.append(UInt8(ascii: " "), UInt8(ascii: " "))
                        writer.writeMember(entries[position], indent: 0)
                    }
                    entries[position].fragment = start..<writer.output.count
                }
                writer.output.append(UInt8(ascii: "\n"), UInt8(ascii: "}"))
            }
        }
        writer.output.append(UInt8(ascii: "\n"))
        return writer.output.bytes
    }

    /// One value's text as a suite file holds it, written as if it stood at the top level: what a member
    /// of a suite has after `"key": `, one level less indented (no trailing newline).
    static func encodeValue(_ value: DefaultsValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 32, spellings: JSONNumberSpellings())
        writer.write(value, indent: 0)
        return writer.output.bytes
    }

    /// `"key": value` of a dictionary at `indent` (the caller wrote the member's indentation).
    private mutating func writeMember(_ entry: SuiteFormat.Entry, indent: Int) {
        writeString(entry.key)
        output.append(UInt8(ascii: ":"), UInt8(ascii: " "))
        write(entry.value, indent: indent + 1)
    }

    private mutating func write(_ value: DefaultsValue, indent: Int) {
        switch value {
        case .string(let string): writeString(string)
        case .integer(let integer): output.appendDecimal(integer)
        case .double(let double):
            if let memberSpellings, let text = memberSpellings[JSONNumberSpellings.slot(double)] {
                output.append(text)
            } else {
                output.append(Self.text(for: double))
            }
        case .bool(let bool): output.append(bool ? "true" : "false")
        case .date(let date): writeString(JSONRepresentation.string(for: date))
        case .data(let data): writeString(JSONRepresentation.string(for: data))
        case .array(let array): writeArray(array, indent: indent)
        case .dictionary(let dictionary): writeEntries(SuiteFormat.sortedEntries(of: dictionary), indent: indent)
        }
    }

    private mutating func writeEntries(_ entries: [SuiteFormat.Entry], indent: Int) {
        if entries.isEmpty {
            output.append(UInt8(ascii: "{"), UInt8(ascii: "}"))
            return
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        for entry in entries {
            if !first { output.append(UInt8(ascii: ",")) }
            if layout?.oneLine == true && first {
                first = false
                writeMember(entry, indent: indent)
                continue
            }
            first = false
            breakLine(indent: indent + 1)
            writeMember(entry, indent: indent)
        }
        breakLine(indent: indent, closing: true)
        output.append(UInt8(ascii: "}"))
    }

    private mutating func writeArray(_ array: [DefaultsValue], indent: Int) {
        if array.isEmpty {
            output.append(UInt8(ascii: "["), UInt8(ascii: "]"))
            return
        }
        output.append(UInt8(ascii: "["))
        var first = true
        for element in array {
            if !first { output.append(UInt8(ascii: ",")) }
            if layout?.oneLine == true && first {
                first = false
                write(element, indent: indent + 1)
                continue
            }
            first = false
            breakLine(indent: indent + 1)
            write(element, indent: indent + 1)
        }
        breakLine(indent: indent, closing: true)
        output.append(UInt8(ascii: "]"))
    }

    /// A quoted, escaped string. Runs of bytes that need no escape are copied in one go.
    private mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            output.append(UInt8(ascii: "\""))
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                writeEscape(byte)
            }
            output.append(UnsafeBufferPointer(rebasing: bytes[runStart...]))
            output.append(UInt8(ascii: "\""))
        }
    }

    private mutating func writeEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\\"), UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
        case 0x0A: output.append(UInt8(ascii: "\\"), UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "\\"), UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "\\"), UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "\\"), UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "\\"), UInt8(ascii: "f"))
        default:
            // \u00XX, upper-case hexadecimal digits.
            func hex(_ digit: UInt8) -> UInt8 {
                digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "A") + digit - 10
            }
            output.append(UInt8(ascii: "\\"), UInt8(ascii: "u"))
            output.append(UInt8(ascii: "0"), UInt8(ascii: "0"))
            output.append(hex(byte >> 4), hex(byte & 0x0F))
        }
    }

    /// The JSON text of a double: Swift's shortest round-tripping digits, with a `.0` added when they
    /// would otherwise read back as an integer, and leading zeros dropped from the exponent (`1e-05` →
    /// `1e-5`); `1e999` and `-1e999` for infinities (valid JSON that reads back as infinity).
    static func text(for double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-1e999" : "1e999" }
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
