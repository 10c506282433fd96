import Foundation

/// Writes the value model as an XML property list (the layout Apple's writer uses: tab indentation,
/// `<dict/>` and `<array/>` for empty containers), keys sorted by Swift `String` ordering.
///
/// Our own writer rather than `PropertyListSerialization`, so that the output is byte-for-byte
/// deterministic and doubles keep their shortest round-tripping digits. Dates are written in whole
/// seconds (rounded down), the precision of the format.
struct PropertyListWriter {
    private var output: [UInt8] = []
    private var layout = Layout()

    /// How the lines of a value are laid out: the library's own (tabs, `\n`) or a hand-formatted file's.
    struct Layout {
        /// The line break.
        var newline: [UInt8] = [UInt8(ascii: "\n")]
        /// One level of indentation.
        var unit: [UInt8] = [UInt8(ascii: "\t")]
        /// What every line starts with before its levels (the indentation of the member it is in).
        var base: [UInt8] = []
    }

    /// Serialises a suite's top-level dictionary.
    static func encodeSuite(_ values: [String: DefaultsValue]) -> Data {
        var entries = SuiteFormat.sortedEntries(of: values)
        return Data(encodeSuiteBytes(&entries, reusing: nil))
    }

    /// Serialises a suite's top-level entries, already sorted by key. An entry with a `fragment` is
    /// copied from `previous` instead of encoded; every entry's `fragment` is set to where its text is in
    /// the result. `capacity` is the expected size.
    static func encodeSuiteBytes(_ entries: inout [SuiteFormat.Entry], reusing previous: [UInt8]?, capacity: Int = 0)
        -> [UInt8]
    {
        var writer = PropertyListWriter()
        writer.output.reserveCapacity(max(capacity, 64 * entries.count + 256))
        writer.append(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """)
        if entries.isEmpty {
            writer.append("<dict/>\n")
        } else {
            writer.append("<dict>\n")
            (previous ?? []).withUnsafeBufferPointer { previous in
                for position in entries.indices {
                    let start = writer.output.count
                    if let fragment = entries[position].fragment, fragment.upperBound <= previous.count {
                        writer.output.append(contentsOf: UnsafeBufferPointer(rebasing: previous[fragment]))
                    } else {
                        writer.writeMember(entries[position], indent: 0)
                    }
                    entries[position].fragment = start..<writer.output.count
                }
            }
            writer.append("</dict>\n")
        }
        writer.append("</plist>\n")
        return writer.output
    }

    /// The text of `value` as the value of a member: its first line without indentation, the others
    /// indented in `layout` (one level deeper than `layout.base` inside a container), no line break after it.
    static func encodeValue(_ value: DefaultsValue, layout: Layout) -> [UInt8] {
        var writer = PropertyListWriter()
        writer.layout = layout
        writer.write(value, indent: 0, indented: false)
        writer.output.removeLast(layout.newline.count)
        return writer.output
    }

    /// The `<key>` element of `key`, escaped.
    static func encodeKey(_ key: String) -> [UInt8] {
        var writer = PropertyListWriter()
        writer.layout.newline = []
        writer.element("key", escaped: key)
        return writer.output
    }

    private mutating func write(_ value: DefaultsValue, indent: Int, indented: Bool = true) {
        if indented { indentation(indent) }
        switch value {
        case .string(let string): element("string", escaped: string)
        case .integer(let integer): element("integer", text: String(integer))
        case .double(let double): element("real", text: Self.text(for: double))
        case .bool(let bool):
            append(bool ? "<true/>" : "<false/>")
            endLine()
        case .date(let date): element("date", text: ISO8601Text.secondString(for: date))
        case .data(let data): element("data", text: data.base64EncodedString())
        case .array(let array):
            if array.isEmpty {
                append("<array/>")
                endLine()
                return
            }
            append("<array>")
            endLine()
            for element in array { write(element, indent: indent + 1) }
            closing("array", indent: indent)
        case .dictionary(let dictionary):
            writeEntries(SuiteFormat.sortedEntries(of: dictionary), indent: indent)
        }
    }

    /// A dictionary's entries, sorted by key; the indentation of the opening tag has been written.
    private mutating func writeEntries(_ entries: [SuiteFormat.Entry], indent: Int) {
        if entries.isEmpty {
            append("<dict/>")
            endLine()
            return
        }
        append("<dict>")
        endLine()
        for entry in entries { writeMember(entry, indent: indent) }
        closing("dict", indent: indent)
    }

    /// `<key>` and value of a dictionary at `indent`, with their indentation and line ends.
    private mutating func writeMember(_ entry: SuiteFormat.Entry, indent: Int) {
        indentation(indent + 1)
        element("key", escaped: entry.key)
        write(entry.value, indent: indent + 1)
    }

    private mutating func closing(_ tag: String, indent: Int) {
        indentation(indent)
        append("</\(tag)>")
        endLine()
    }

    private mutating func element(_ tag: String, text: String) {
        append("<\(tag)>\(text)</\(tag)>")
        endLine()
    }

    /// The indentation of a line `levels` deep.
    private mutating func indentation(_ levels: Int) {
        output.append(contentsOf: layout.base)
        if layout.unit.count == 1 {
            output.append(contentsOf: repeatElement(layout.unit[0], count: levels))
        } else {
            for _ in 0..<levels { output.append(contentsOf: layout.unit) }
        }
    }

    private mutating func endLine() {
        output.append(contentsOf: layout.newline)
    }

    private mutating func element(_ tag: String, escaped text: String) {
        append("<\(tag)>")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): append("&amp;")
            case UInt8(ascii: "<"): append("&lt;")
            case UInt8(ascii: ">"): append("&gt;")
            default: output.append(byte)
            }
        }
        append("</\(tag)>")
        endLine()
    }

    private mutating func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    /// The `<real>` text of a double: Swift's shortest round-tripping digits, or `nan`, `+infinity`,
    /// `-infinity`.
    static func text(for double: Double) -> String {
        if double.isNaN { return "nan" }
        if double.isInfinite { return double < 0 ? "-infinity" : "+infinity" }
        return double.description
    }
}
