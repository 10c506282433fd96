import Foundation

/// An RFC 8259 JSON reader over UTF-8 bytes that produces the value model directly.
///
/// Suite files (``parseSuite(_:fileURL:)``, ``memberValue(in:at:key:spellings:)``) may also hold comments
/// (`//` to the end of the line, `/* … */`) wherever whitespace may stand, and a trailing comma after the last
/// member of an object or element of an array, as VS Code's `settings.json` does; other documents
/// (``parseDocument(_:)``: etcd answers, cloud values) are strict. Beyond the RFC it also accepts the literals `NaN`, `Infinity` and `-Infinity` (which earlier versions of the
/// writer emitted for non-finite doubles) and a leading UTF-8 byte-order mark. Integers without fraction or exponent that fit
/// in `Int` become `.integer`; every other number becomes `.double`. A `null` dictionary value means the
/// key is absent; `null` anywhere else is an error. Duplicate keys are accepted and the last one wins.
///
/// Errors carry the 1-based line and column (in characters) of the offending character; a trailing
/// comma in a strict document is reported at the comma, an unterminated string or comment at its start.
struct JSONReader {
    /// Containers nested deeper than this are rejected instead of overflowing the stack.
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private let fileURL: URL?
    private var index = 0
    /// Where the text of numbers the writer would spell differently is recorded (see
    /// ``JSONNumberSpellings``), under ``topLevelKey``.
    private var spellings = JSONNumberSpellings()
    private var topLevelKey = ""
    /// Whether comments and trailing commas are accepted (suite files).
    private let allowsComments: Bool

    private init(bytes: UnsafeBufferPointer<UInt8>, fileURL: URL?, allowsComments: Bool = true) {
        self.bytes = bytes
        self.fileURL = fileURL
        self.allowsComments = allowsComments
    }

    /// Parses a whole suite file: a top-level object, or nothing but whitespace (an empty suite).
    static func parseSuite(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        var spellings = JSONNumberSpellings()
        return try parseSuite(data, fileURL: fileURL, spellings: &spellings)
    }

    /// ``parseSuite(_:fileURL:)``, also giving the text of the numbers the writer would spell differently.
    static func parseSuite(
        _ data: Data, fileURL: URL?, spellings: inout JSONNumberSpellings
    ) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        let (values, found) = try reading(data, fileURL: fileURL) { reader throws(DefaultsError) in
            (try reader.parseTopLevel(), reader.spellings)
        }
        spellings = found
        return values
    }

    /// Runs `body` with a reader over `data`'s bytes.
    private static func reading<Parsed>(
        _ data: Data, fileURL: URL?, allowsComments: Bool = true,
        _ body: (inout JSONReader) throws(DefaultsError) -> Parsed
    ) throws(DefaultsError) -> Parsed {
        let result: Result<Parsed, DefaultsError> = data.withUnsafeBytes { raw in
            var reader = JSONReader(
                bytes: raw.bindMemory(to: UInt8.self), fileURL: fileURL, allowsComments: allowsComments)
            return Result { () throws(DefaultsError) in try body(&reader) }
        }
        return try result.get()
    }

    // MARK: - Structure

    private mutating func parseTopLevel() throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        skipByteOrderMark()
        try skipWhitespace()
        guard index < bytes.count else { return [:] }
        guard bytes[index] == UInt8(ascii: "{") else {
            throw error("expected '{' (the top level of a suite file must be an object), found \(found())")
        }
        // Top-level keys are told apart by their bytes (see ``ExactKey``).
        let dictionary = try parseObject(depth: 1, keyedBy: { ExactKey($0) })
        try skipWhitespace()
        if index < bytes.count {
            throw error("expected end of file after the top-level object, found \(found())")
        }
        return dictionary
    }

    /// A document holding one value of any kind, such as an etcd answer or a cloud value's text: the
    /// value, or `nil` for the literal `null`. Errors are reported as for a suite file.
    static func parseDocument(_ data: Data) throws(DefaultsError) -> DefaultsValue? {
        try reading(data, fileURL: nil, allowsComments: false) { reader throws(DefaultsError) in
            try reader.parseWholeValue()
        }
    }

    private mutating func parseWholeValue() throws(DefaultsError) -> DefaultsValue? {
        skipByteOrderMark()
        try skipWhitespace()
        let value = try parseValue(depth: 0, context: "at the start of the text")
        try skipWhitespace()
        if index < bytes.count { throw error("expected end of file after the value, found \(found())") }
        return value
    }

    private mutating func skipByteOrderMark() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    /// Parses a value, or returns `nil` for the literal `null`.
    private mutating func parseValue(depth: Int, context: String) throws(DefaultsError) -> DefaultsValue? {
        guard index < bytes.count else { throw error("expected a value \(context), found end of file") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .dictionary(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"):
            try expectLiteral("true", context: context)
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false", context: context)
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null", context: context)
            return nil
        case UInt8(ascii: "N"):
            try expectLiteral("NaN", context: context)
            spellings.record("NaN", for: .nan, key: topLevelKey)
            return .double(.nan)
        case UInt8(ascii: "I"):
            try expectLiteral("Infinity", context: context)
            spellings.record("Infinity", for: .infinity, key: topLevelKey)
            return .double(.infinity)
        default:
            throw error("expected a value \(context), found \(found())")
        }
    }

    private mutating func parseObject(depth: Int) throws(DefaultsError) -> [String: DefaultsValue] {
        try parseObject(depth: depth) { $0 }
    }

    /// An object whose keys are made by `makeKey` (a later member with an equal key replaces an earlier one).
    private mutating func parseObject<Key: Hashable>(
        depth: Int, keyedBy makeKey: (String) -> Key
    ) throws(DefaultsError) -> [Key: DefaultsValue] {
        if depth > Self.maximumDepth { throw error("containers are nested more than \(Self.maximumDepth) levels deep") }
        index += 1  // '{'
        try skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return [:]
        }
        // Members are collected first and the dictionary is made at its final size: growing it while
        // parsing would hash every key again at each doubling (half the time of a large file).
        var members: [(key: String, value: DefaultsValue?)] = []
        try parseMembers(depth: depth, into: &members)
        var dictionary = [Key: DefaultsValue](minimumCapacity: members.count)
        members.withUnsafeMutableBufferPointer { members in
            for position in members.indices {
                // Moved out rather than copied, so the keys and values are not retained here and released
                // again with the array; an empty key and no value are left behind, which cost nothing.
                let (key, value) = members.moveElement(from: position)
                members.initializeElement(at: position, to: ("", nil))
                if let value {
                    dictionary[makeKey(key)] = value
                } else {
                    dictionary.removeValue(forKey: makeKey(key))
                }
            }
        }
        return dictionary
    }

    /// The members of a non-empty object, in order (`nil`: the value was `null`), up to and past its `}`.
    private mutating func parseMembers(depth: Int, into members: inout [(key: String, value: DefaultsValue?)])
        throws(DefaultsError)
    {
        while true {
            try skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key in an object, found \(found())")
            }
            let key = try parseString()
            if depth == 1 { topLevelKey = key }
            try skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after a key in an object, found \(found())")
            }
            index += 1
            try skipWhitespace()
            members.append((key, try parseValue(depth: depth, context: "after ':' in an object")))
            try skipWhitespace()
            guard index < bytes.count else {
                throw error("expected ',' or '}' after a value in an object, found end of file")
            }
            switch bytes[index] {
            case UInt8(ascii: ","):
                let comma = index
                index += 1
                try skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    guard allowsComments else { throw error("trailing comma before '}'", at: comma) }
                    index += 1
                    return
                }
            case UInt8(ascii: "}"):
                index += 1
                return
            default:
                throw error("expected ',' or '}' after a value in an object, found \(found())")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(DefaultsError) -> [DefaultsValue] {
        if depth > Self.maximumDepth { throw error("containers are nested more than \(Self.maximumDepth) levels deep") }
        index += 1  // '['
        var array: [DefaultsValue] = []
        try skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return array
        }
        while true {
            try skipWhitespace()
            let start = index
            guard let value = try parseValue(depth: depth, context: "in an array") else {
                throw error(
                    "expected a value in an array, found 'null' (null is only allowed as an object value, where it means the key is absent)",
                    at: start)
            }
            array.append(value)
            try skipWhitespace()
            guard index < bytes.count else {
                throw error("expected ',' or ']' after a value in an array, found end of file")
            }
            switch bytes[index] {
            case UInt8(ascii: ","):
                let comma = index
                index += 1
                try skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    guard allowsComments else { throw error("trailing comma before ']'", at: comma) }
                    index += 1
                    return array
                }
            case UInt8(ascii: "]"):
                index += 1
                return array
            default:
                throw error("expected ',' or ']' after a value in an array, found \(found())")
            }
        }
    }

    // MARK: - Scalars

    private mutating func expectLiteral(_ literal: StaticString, context: String) throws(DefaultsError) {
        let matches = literal.withUTF8Buffer { expected in
            index + expected.count <= bytes.count
                && (0..<expected.count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error("expected a value \(context), found \(found())") }
        index += literal.utf8CodeUnitCount
    }

    private mutating func parseString() throws(DefaultsError) -> String {
        let open = index
        index += 1  // '"'
        let start = index
        // Fast path: no escapes, the common case for keys and most values.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let string = try makeString(start..<index, isASCII: highBits < 0x80)
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            highBits |= byte
            index += 1
        }
        var scalars: [UInt8] = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: scalars, as: UTF8.self) else {
                    throw error("invalid UTF-8 in a string", at: open)
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &scalars)
            case 0..<0x20:
                throw error(
                    "expected '\"' to end the string, found \(found()) (control characters in strings must be escaped)")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw error("unterminated string: expected '\"', found end of file", at: open)
    }

    private func makeString(_ range: Range<Int>, isASCII: Bool) throws(DefaultsError) -> String {
        // ASCII cannot be invalid UTF-8, so it skips validation.
        if isASCII { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        guard let string = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
            throw error("invalid UTF-8 in a string", at: range.lowerBound - 1)
        }
        return string
    }

    private mutating func parseEscape(into output: inout [UInt8]) throws(DefaultsError) {
        let backslash = index
        index += 1
        guard index < bytes.count else {
            throw error("unterminated string: expected '\"', found end of file", at: backslash)
        }
        let simple: UInt8?
        switch bytes[index] {
        case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default:
            throw error(
                "invalid escape sequence in a string: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX after '\\', found \(found())"
            )
        }
        if let simple {
            output.append(simple)
            index += 1
            return
        }
        index += 1  // 'u'
        let unit = try parseHex4()
        var scalar: Unicode.Scalar?
        if UTF16.isLeadSurrogate(unit) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw error(
                    "unpaired surrogate in a string: expected a \\uXXXX low surrogate after a high surrogate",
                    at: backslash)
            }
            index += 2
            let low = try parseHex4()
            guard UTF16.isTrailSurrogate(low) else {
                throw error(
                    "unpaired surrogate in a string: expected a \\uXXXX low surrogate after a high surrogate",
                    at: backslash)
            }
            // Typed steps: as one mixed-literal expression this line took 144 ms to type-check.
            let highBits: UInt32 = UInt32(unit) - 0xD800
            let lowBits: UInt32 = UInt32(low) - 0xDC00
            scalar = Unicode.Scalar(0x10000 + (highBits << 10) + lowBits)
        } else if UTF16.isTrailSurrogate(unit) {
            throw error("unpaired surrogate in a string: a low surrogate without a high surrogate", at: backslash)
        } else {
            scalar = Unicode.Scalar(UInt32(unit))
        }
        guard let scalar else { throw error("invalid \\u escape in a string", at: backslash) }
        output.append(contentsOf: UTF8.encode(scalar)!)
    }

    private mutating func parseHex4() throws(DefaultsError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw error("expected 4 hexadecimal digits after '\\u', found end of file")
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected 4 hexadecimal digits after '\\u', found \(found())")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(DefaultsError) -> DefaultsValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "I") {
                try expectLiteral("Infinity", context: "after '-'")
                spellings.record("-Infinity", for: -.infinity, key: topLevelKey)
                return .double(-.infinity)
            }
        }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw error("expected a digit in a number, found \(found())")
        }
        // Accumulate as a negative number so that Int.min parses without overflow.
        var accumulated = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw error("numbers must not have leading zeros", at: start)
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let digit = Int(bytes[index] - UInt8(ascii: "0"))
                if !overflow {
                    let (times10, o1) = accumulated.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times10.subtractingReportingOverflow(digit)
                    if o1 || o2 { overflow = true } else { accumulated = next }
                }
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("expected a digit after '.' in a number, found \(found())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("expected a digit in the exponent of a number, found \(found())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger && !overflow {
            if negative { return .integer(accumulated) }
            if accumulated != .min { return .integer(-accumulated) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text) else { throw error("invalid number '\(text)'", at: start) }
        if text != JSONWriter.text(for: double) { spellings.record(text, for: double, key: topLevelKey) }
        return .double(double)
    }

    // MARK: - Helpers

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Moves past whitespace and, in a suite file, comments. An unterminated `/*` comment is an error at
    /// its start; a `/` that starts no comment is left for the caller to report.
    private mutating func skipWhitespace() throws(DefaultsError) {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "/") where allowsComments:
                guard try skipComment() else { return }
            default: return
            }
        }
    }

    /// Moves past the comment at a `/` (kept out of ``skipWhitespace()``'s loop, which runs between all
    /// tokens); `false` when the `/` starts none.
    @inline(never)
    private mutating func skipComment() throws(DefaultsError) -> Bool {
        let start = index
        switch JSONComments.skip(bytes, &index) {
        case .some(let skipped): return skipped
        case nil: throw error("unterminated comment: expected '*/', found end of file", at: start)
        }
    }

    /// Describes what is at the current position: `end of file`, a quoted word or character, or `U+XXXX`
    /// for a control character.
    private func found() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte < 0x20 || byte == 0x7F {
            return "U+" + String(byte, radix: 16, uppercase: true).leftPadded(to: 4)
        }
        if isWordByte(byte) {
            var end = index
            while end < bytes.count, end - index < 24, isWordByte(bytes[end]) { end += 1 }
            return "'" + String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self) + "'"
        }
        if byte < 0x80 { return "'" + String(UnicodeScalar(byte)) + "'" }
        var end = index + 1
        while end < bytes.count, end - index < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "'" + String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self) + "'"
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "+"),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private func error(_ message: String, at offset: Int? = nil) -> DefaultsError {
        let position = TextPosition(of: offset ?? index, in: bytes)
        return DefaultsError(
            .malformedFile, message: message, fileURL: fileURL, line: position.line, column: position.column)
    }
}

// MARK: - Parts of a suite file

extension JSONReader {
    /// The string whose quoted text (quotes included) is exactly `range` of `bytes`, or `nil` when it
    /// does not parse or does not end at the range's end.
    static func string(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> String? {
        guard range.lowerBound < range.upperBound, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        var reader = JSONReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        guard let string = try? reader.parseString(), reader.index == range.upperBound else { return nil }
        return string
    }

    /// The value of a top-level member whose text is exactly `range` of `bytes` (`.some(nil)`: `null`,
    /// the key is absent), or `nil` when it does not parse or does not end at the range's end. Nesting is
    /// limited as in a whole file.
    /// The spellings of its numbers (see ``JSONNumberSpellings``) replace those of `key` in `spellings`.
    static func memberValue(
        in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>, key: String, spellings: inout JSONNumberSpellings
    ) -> DefaultsValue?? {
        guard range.lowerBound < range.upperBound else { return nil }
        var reader = JSONReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        reader.topLevelKey = key
        guard let value = try? reader.parseValue(depth: 1, context: "after ':' in an object"),
            reader.index == range.upperBound
        else { return nil }
        spellings.set(reader.spellings.spellings(forKey: key), forKey: key)
        return .some(value)
    }
}
