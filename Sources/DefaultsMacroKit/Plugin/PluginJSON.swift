/// A JSON value of the plugin protocol's messages, read and written without Foundation.
///
/// The plugin avoids Foundation (and synthesized `Codable`): it is the first thing a clean build compiles and
/// nothing that uses the macros can start before it, so every second spent compiling it, or importing
/// Foundation into it, is on the build's critical path. See "Clean debug build" in `Docs/benchmarks.md`.
public enum PluginJSON: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its JSON text (the protocol's numbers are integers: offsets and versions).
    case number(String)
    /// A string, escapes decoded.
    case string(String)
    /// An array.
    case array([PluginJSON])
    /// An object; member order is not kept (the writer sorts members by key).
    case object([String: PluginJSON])

    /// The member named `key` of an object; `nil` for a missing member or a value that is not an object.
    public subscript(key: String) -> PluginJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The value as a string, if it is one.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as an `Int`, if it is an integer number.
    public var int: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    /// The value's elements, if it is an array.
    public var array: [PluginJSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }
}

// MARK: - Reading

extension PluginJSON {
    /// Parses one JSON document; `nil` when `bytes` is not exactly one valid JSON value (surrounding
    /// whitespace allowed) or nests deeper than 512 levels.
    public init?<Bytes: Collection>(parsing bytes: Bytes) where Bytes.Element == UInt8 {
        var reader = PluginJSONReader(bytes: Array(bytes))
        guard let value = reader.parseDocument() else { return nil }
        self = value
    }
}

/// A recursive-descent JSON reader over UTF-8 bytes (RFC 8259).
struct PluginJSONReader {
    let bytes: [UInt8]
    var index = 0
    /// Deep enough for any message the compiler sends; bounded so hostile input cannot overflow the stack.
    static let maximumDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() -> PluginJSON? {
        guard let value = parseValue(depth: 0) else { return nil }
        skipWhitespace()
        return index == bytes.count ? value : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func consumeWord(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func parseValue(depth: Int) -> PluginJSON? {
        guard depth < Self.maximumDepth else { return nil }
        skipWhitespace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return parseObject(depth: depth)
        case UInt8(ascii: "["): return parseArray(depth: depth)
        case UInt8(ascii: "\""): return parseString().map(PluginJSON.string)
        case UInt8(ascii: "t"): return consumeWord("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return consumeWord("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return consumeWord("null") ? .null : nil
        default: return parseNumber()
        }
    }

    private mutating func parseObject(depth: Int) -> PluginJSON? {
        index += 1  // {
        var members: [String: PluginJSON] = [:]
        if consume(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString(),
                consume(UInt8(ascii: ":")), let value = parseValue(depth: depth + 1)
            else { return nil }
            members[key] = value
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}")) ? .object(members) : nil
    }

    private mutating func parseArray(depth: Int) -> PluginJSON? {
        index += 1  // [
        var elements: [PluginJSON] = []
        if consume(UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            guard let element = parseValue(depth: depth + 1) else { return nil }
            elements.append(element)
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? .array(elements) : nil
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text. A digit after a leading `0` is
    /// left unread, so the enclosing array, object or document rejects it.
    private mutating func parseNumber() -> PluginJSON? {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard skipDigits() else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard skipDigits() else { return nil }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// Skips decimal digits; `false` when there are none.
    private mutating func skipDigits() -> Bool {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index > start
    }

    /// Reads a string starting at its opening quote.
    private mutating func parseString() -> String? {
        index += 1  // "
        var output: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(validating: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard parseEscape(into: &output) else { return nil }
            case 0..<0x20:
                return nil  // control characters must be escaped
            default:
                output.append(byte)
                index += 1
            }
        }
        return nil
    }

    private mutating func parseEscape(into output: inout [UInt8]) -> Bool {
        index += 1  // backslash
        guard index < bytes.count else { return false }
        let escaped = bytes[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            guard let scalar = parseUnicodeEscape() else { return false }
            output.append(contentsOf: UTF8.encode(scalar)!)
        default: return false
        }
        return true
    }

    /// The scalar of `XXXX` after `\u` (a surrogate pair takes a second `\uXXXX`).
    private mutating func parseUnicodeEscape() -> Unicode.Scalar? {
        guard let unit = parseHex4() else { return nil }
        guard UTF16.isLeadSurrogate(unit) else { return Unicode.Scalar(unit) }
        guard consumeWord("\\u"), let low = parseHex4(), UTF16.isTrailSurrogate(low) else { return nil }
        let highBits = UInt32(unit) - 0xD800
        let lowBits = UInt32(low) - 0xDC00
        return Unicode.Scalar(0x10000 + (highBits << 10) + lowBits)
    }

    private mutating func parseHex4() -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}

// MARK: - Writing

extension PluginJSON {
    /// The value as compact UTF-8 JSON, object members sorted by key (so equal values give equal bytes).
    public var serialized: [UInt8] {
        var output: [UInt8] = []
        write(to: &output)
        return output
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
