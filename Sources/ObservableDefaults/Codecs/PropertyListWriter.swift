import Foundation

/// Writes the value model as an XML property list (the layout Apple's writer uses: tab indentation,
/// `<dict/>` and `<array/>` for empty containers), keys sorted by Swift `String` ordering.
///
/// Our own writer rather than `PropertyListSerialization`, so that the output is byte-for-byte
/// deterministic and doubles keep their shortest round-tripping digits. Dates are written in whole
/// seconds (rounded down), the precision of the format.
struct PropertyListWriter {
    private var output: [UInt8] = []

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

    private mutating func write(_ value: DefaultsValue, indent: Int) {
        output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
        switch value {
        case .string(let string): element("string", escaped: string)
        case .integer(let integer): element("integer", text: String(integer))
        case .double(let double): element("real", text: Self.text(for: double))
        case .bool(let bool): append(bool ? "<true/>\n" : "<false/>\n")
        case .date(let date): element("date", text: ISO8601Text.secondString(for: date))
        case .data(let data): element("data", text: data.base64EncodedString())
        case .array(let array):
            if array.isEmpty {
                append("<array/>\n")
                return
            }
            append("<array>\n")
            for element in array { write(element, indent: indent + 1) }
            closing("array", indent: indent)
        case .dictionary(let dictionary):
            writeEntries(SuiteFormat.sortedEntries(of: dictionary), indent: indent)
        }
    }

    /// A dictionary's entries, sorted by key; the indentation of the opening tag has been written.
    private mutating func writeEntries(_ entries: [SuiteFormat.Entry], indent: Int) {
        if entries.isEmpty {
            append("<dict/>\n")
            return
        }
        append("<dict>\n")
        for entry in entries { writeMember(entry, indent: indent) }
        closing("dict", indent: indent)
    }

    /// `<key>` and value of a dictionary at `indent`, with their indentation and line ends.
    private mutating func writeMember(_ entry: SuiteFormat.Entry, indent: Int) {
        output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent + 1))
        element("key", escaped: entry.key)
        write(entry.value, indent: indent + 1)
    }

    private mutating func closing(_ tag: String, indent: Int) {
        output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
        append("</\(tag)>\n")
    }

    private mutating func element(_ tag: String, text: String) {
        append("<\(tag)>\(text)</\(tag)>\n")
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
        append("</\(tag)>\n")
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
