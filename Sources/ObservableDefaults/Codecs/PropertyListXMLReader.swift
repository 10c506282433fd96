import Foundation

/// A fast reader for the XML property lists suites are normally stored as (the layout
/// ``PropertyListWriter`` and Apple's tools write), producing the value model directly.
///
/// It is deliberately narrow, so that it reads exactly what `PropertyListSerialization` reads:
/// errors it can place for certain (a character reference to a character XML does not allow or out of
/// range, containers nested deeper than ``maximumDepth``, an integer that does not fit in 64 bits, a date in
/// the writers' form with a field out of range, data that is not base64 — values Foundation would read as
/// something else, which the next write would store) are thrown with their line and column; anything
/// else outside the plain layout — comments, CDATA, entity references other than the five
/// predefined ones and character references, attributes on value elements, control characters or
/// carriage returns in text, an encoding other than UTF-8, duplicate keys, reals or dates in forms other
/// than the ones writers emit, any other error — makes it return
/// ``Outcome/unsupported``, and the caller reads the bytes with `PropertyListSerialization` instead, which then also reports the
/// error. (`PropertyListTests` compares both readers on the forms this one accepts.)
struct PropertyListXMLReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let fileURL: URL?
    private var index = 0
    /// The first definite error met; parsing then unwinds by returning `nil`.
    private var failure: DefaultsError?
    /// The rest of the document after the top-level value was read before (a scan that reached the bytes
    /// the previous version ends with): ``parseDocument(_:)`` does not check it again.
    private var restWasRead = false

    /// Containers nested deeper than this are rejected (as in ``JSONReader``).
    static let maximumDepth = 512

    private init(bytes: UnsafeBufferPointer<UInt8>, fileURL: URL?) {
        self.bytes = bytes
        self.fileURL = fileURL
    }

    /// What reading a document gave.
    enum Outcome {
        /// The document's top-level value.
        case value(DefaultsValue)
        /// The document uses something this reader leaves to `PropertyListSerialization`.
        case unsupported
    }

    /// The document's top-level value, ``Outcome/unsupported`` when the reader does not handle this
    /// document, or a thrown error with its line and column when the document is certainly invalid.
    static func parse(_ data: Data, fileURL: URL? = nil) throws(DefaultsError) -> Outcome {
        try read(data, fileURL: fileURL) { $0.parseValue(depth: 1) }.map(Outcome.value) ?? .unsupported
    }

    /// The top-level dictionary of a suite file, its keys told apart by their bytes (see ``ExactKey``);
    /// a document whose top level is not a dictionary gives ``Outcome/value(_:)``.
    static func parseSuite(_ data: Data, fileURL: URL? = nil) throws(DefaultsError) -> SuiteOutcome {
        try read(data, fileURL: fileURL) { reader -> SuiteOutcome? in
            if reader.startsWith("<dict>") {
                reader.index += 6
                return reader.parseDictionary(depth: 1, keyedBy: { ExactKey($0) }).map(SuiteOutcome.suite)
            }
            return reader.parseValue(depth: 1).map { SuiteOutcome.other(.value($0)) }
        } ?? .other(.unsupported)
    }

    /// What reading a suite file gave.
    enum SuiteOutcome {
        /// The top-level dictionary.
        case suite([ExactKey: DefaultsValue])
        /// Another top-level value, or a document left to `PropertyListSerialization`.
        case other(Outcome)
    }

    /// Reads a document whose top-level value `parseTop` reads; `nil`: unsupported.
    private static func read<T>(
        _ data: Data, fileURL: URL?, _ parseTop: (inout PropertyListXMLReader) -> T?
    ) throws(DefaultsError) -> T? {
        let result: Result<T?, DefaultsError> = data.withUnsafeBytes { raw in
            var reader = PropertyListXMLReader(bytes: raw.bindMemory(to: UInt8.self), fileURL: fileURL)
            let value = reader.parseDocument(parseTop)
            if let failure = reader.failure { return .failure(failure) }
            return .success(value)
        }
        return try result.get()
    }

    /// Records a definite error at byte `offset` (the first one wins) and returns `nil` to unwind.
    private mutating func fail<T>(_ message: String, at offset: Int) -> T? {
        if failure == nil {
            let position = TextPosition(of: offset, in: bytes)
            failure = DefaultsError(
                .malformedFile, message: message, fileURL: fileURL, line: position.line, column: position.column)
        }
        return nil
    }

    // MARK: - Document

    private mutating func parseDocument<T>(_ parseTop: (inout PropertyListXMLReader) -> T?) -> T? {
        skipWhitespace()
        if startsWith("<?xml") {
            guard let end = position(of: "?>") else { return nil }
            let declaration = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
                .lowercased()
            if declaration.contains("encoding") && !declaration.contains("encoding=\"utf-8\"")
                && !declaration.contains("encoding='utf-8'")
            {
                return nil
            }
            index = end + 2
            skipWhitespace()
        }
        if startsWith("<!DOCTYPE") {
            // An internal subset (`[...]`) could declare entities; leave such documents to Foundation.
            while index < bytes.count, bytes[index] != UInt8(ascii: ">") {
                if bytes[index] == UInt8(ascii: "[") { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
            skipWhitespace()
        }
        guard startsWith("<plist"), index + 6 < bytes.count,
            bytes[index + 6] == UInt8(ascii: ">") || isWhitespace(bytes[index + 6])
        else { return nil }
        while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
        guard index < bytes.count, bytes[index - 1] != UInt8(ascii: "/") else { return nil }
        index += 1
        skipWhitespace()
        guard let value = parseTop(&self) else { return nil }
        if restWasRead { return value }
        skipWhitespace()
        guard consume("</plist>") else { return nil }
        skipWhitespace()
        return index == bytes.count ? value : nil
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) -> DefaultsValue? {
        if depth > Self.maximumDepth {
            return fail("containers are nested more than \(Self.maximumDepth) levels deep", at: index)
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { return nil }
        index += 1
        let nameStart = index
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        let name = nameStart..<index
        guard !name.isEmpty, index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "/") {
            guard consume("/>") else { return nil }
            if matches(name, "true") { return .bool(true) }
            if matches(name, "false") { return .bool(false) }
            if matches(name, "string") { return .string("") }
            if matches(name, "dict") { return .dictionary([:]) }
            if matches(name, "array") { return .array([]) }
            return nil
        }
        guard bytes[index] == UInt8(ascii: ">") else { return nil }
        index += 1
        if matches(name, "dict") { return parseDictionary(depth: depth).map(DefaultsValue.dictionary) }
        if matches(name, "array") { return parseArray(depth: depth).map(DefaultsValue.array) }
        if matches(name, "string") { return parseText(closing: "</string>").map(DefaultsValue.string) }
        if matches(name, "integer") { return parseInteger() }
        if matches(name, "real") { return parseReal() }
        if matches(name, "date") { return parseDate() }
        if matches(name, "data") { return parseData() }
        return nil
    }

    private mutating func parseDictionary(depth: Int) -> [String: DefaultsValue]? {
        parseDictionary(depth: depth) { $0 }
    }

    /// A dictionary whose keys are made by `makeKey`; `nil` when two keys are equal (by `Key`'s equality).
    private mutating func parseDictionary<Key: Hashable>(depth: Int, keyedBy makeKey: (String) -> Key) -> [Key:
        DefaultsValue]?
    {
        // Collected first, then inserted into a dictionary of the final size (no rehash per doubling).
        var members: [(key: String, value: DefaultsValue)] = []
        while true {
            skipWhitespace()
            if consume("</dict>") { break }
            guard consume("<key>"), let key = parseText(closing: "</key>") else { return nil }
            skipWhitespace()
            guard let value = parseValue(depth: depth + 1) else { return nil }
            members.append((key, value))
        }
        var dictionary = [Key: DefaultsValue](minimumCapacity: members.count)
        var duplicate = false
        members.withUnsafeMutableBufferPointer { members in
            for position in members.indices {
                // Moved out, not copied; an empty key and value are left for the array to release.
                let (key, value) = members.moveElement(from: position)
                members.initializeElement(at: position, to: ("", .bool(false)))
                if dictionary.updateValue(value, forKey: makeKey(key)) != nil { duplicate = true }
            }
        }
        // Which duplicate wins is Foundation's to say.
        return duplicate ? nil : dictionary
    }

    private mutating func parseArray(depth: Int) -> [DefaultsValue]? {
        var array: [DefaultsValue] = []
        while true {
            skipWhitespace()
            if consume("</array>") { return array }
            guard let value = parseValue(depth: depth + 1) else { return nil }
            array.append(value)
        }
    }

    /// Character data up to `closing`, with the predefined entities and character references replaced.
    private mutating func parseText(closing: StaticString) -> String? {
        let start = index
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard consume(closing) else { return nil }
                return makeString(text, isASCII: highBits < 0x80)
            }
            if byte == UInt8(ascii: "&") || (byte < 0x20 && byte != 0x09 && byte != 0x0A) { break }
            highBits |= byte
            index += 1
        }
        // Slow path: references. A carriage return (which XML normalises) or another control character
        // is left to Foundation.
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "<"):
                guard consume(closing) else { return nil }
                return decoded.withUnsafeBufferPointer { makeString($0, isASCII: false) }
            case UInt8(ascii: "&"):
                guard let scalar = parseReference() else { return nil }
                decoded.append(contentsOf: UTF8.encode(scalar)!)
            case 0..<0x20 where byte != 0x09 && byte != 0x0A:
                return nil
            default:
                decoded.append(byte)
                index += 1
            }
        }
        return nil
    }

    private func makeString(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String? {
        if isASCII { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#NNN;` `&#xHHH;`. A character reference to a character
    /// XML 1.0 does not allow (NUL and other control characters, surrogates, U+FFFE, U+FFFF, beyond
    /// U+10FFFF) is an error; a carriage return is left to Foundation.
    private mutating func parseReference() -> Unicode.Scalar? {
        let ampersand = index
        index += 1  // '&'
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
            if index - start > 40 { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let name = start..<index
        index += 1  // ';'
        if matches(name, "lt") { return "<" }
        if matches(name, "gt") { return ">" }
        if matches(name, "amp") { return "&" }
        if matches(name, "quot") { return "\"" }
        if matches(name, "apos") { return "'" }
        guard name.count >= 2, bytes[name.lowerBound] == UInt8(ascii: "#") else { return nil }
        var digits = name.dropFirst()
        var radix: UInt32 = 10
        if bytes[digits.lowerBound] == UInt8(ascii: "x") {
            radix = 16
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[name]), as: UTF8.self)
        var value: UInt32 = 0
        for position in digits {
            guard let digit = digitValue(bytes[position], radix: radix) else { return nil }
            // Saturates instead of overflowing: anything above U+10FFFF is rejected below.
            value = min(value, 0x11_0000) * radix + digit
        }
        if value == 0x0D { return nil }
        guard Self.isXMLCharacter(value), let scalar = Unicode.Scalar(value) else {
            return fail(
                "character reference '&\(text);' is not a character XML allows (expected U+9, U+A, U+D, U+20–U+D7FF, U+E000–U+FFFD or U+10000–U+10FFFF)",
                at: ampersand)
        }
        return scalar
    }

    /// Element text without references, for the number, date and data elements.
    private mutating func parsePlainText(closing: StaticString) -> UnsafeBufferPointer<UInt8>? {
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
            if bytes[index] == UInt8(ascii: "&") { return nil }
            index += 1
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        return consume(closing) ? text : nil
    }

    /// `-?[0-9]+` that fits in `Int`; digits that do not fit are an error (Foundation would read them as a
    /// string, and the next write would store that string).
    private mutating func parseInteger() -> DefaultsValue? {
        guard let text = parsePlainText(closing: "</integer>"), !text.isEmpty else { return nil }
        let start = index - "</integer>".utf8.count - text.count
        func tooLarge() -> DefaultsValue? {
            fail(
                "the integer \(String(decoding: text, as: UTF8.self)) does not fit in 64 bits (from -9223372036854775808 to 9223372036854775807)",
                at: start)
        }
        var position = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative { position = 1 }
        guard position < text.count else { return nil }
        // Accumulated as a negative number so that Int.min fits.
        var accumulated = 0
        while position < text.count {
            guard let digit = digitValue(text[position], radix: 10) else { return nil }
            let (times10, o1) = accumulated.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int(digit))
            if o1 || o2 { return tooLarge() }
            accumulated = next
            position += 1
        }
        if negative { return .integer(accumulated) }
        return accumulated == .min ? tooLarge() : .integer(-accumulated)
    }

    /// `-?[0-9]+(.[0-9]+)?([eE][+-]?[0-9]+)?`, or `nan`, `+infinity`, `-infinity` as writers emit them.
    private mutating func parseReal() -> DefaultsValue? {
        guard let text = parsePlainText(closing: "</real>"), !text.isEmpty else { return nil }
        let string = String(decoding: text, as: UTF8.self)
        switch string {
        case "nan": return .double(.nan)
        case "+infinity": return .double(.infinity)
        case "-infinity": return .double(-.infinity)
        default: break
        }
        var position = 0
        func digits() -> Bool {
            let start = position
            while position < text.count, digitValue(text[position], radix: 10) != nil { position += 1 }
            return position > start
        }
        if text[0] == UInt8(ascii: "-") { position = 1 }
        guard digits() else { return nil }
        if position < text.count, text[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() else { return nil }
        }
        if position < text.count, text[position] == UInt8(ascii: "e") || text[position] == UInt8(ascii: "E") {
            position += 1
            if position < text.count, text[position] == UInt8(ascii: "+") || text[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() else { return nil }
        }
        guard position == text.count, let double = Double(string) else { return nil }
        return .double(double)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, the form writers emit. In that form, a month, day, hour, minute or second
    /// out of range is an error (Foundation would roll `2024-13-45T99:99:99Z` over into another date, and the
    /// next write would store that date).
    private mutating func parseDate() -> DefaultsValue? {
        guard let text = parsePlainText(closing: "</date>"), text.count == 20,
            text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "Z")
        else { return nil }
        func field(_ range: Range<Int>) -> Int? {
            var value = 0
            for offset in range {
                guard let digit = digitValue(text[offset], radix: 10) else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = field(0..<4), let month = field(5..<7), let day = field(8..<10), let hour = field(11..<13),
            let minute = field(14..<16), let second = field(17..<19)
        else { return nil }
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour <= 23, minute <= 59,
            second <= 60
        else {
            return fail(
                "'\(String(decoding: text, as: UTF8.self))' is not a date: expected YYYY-MM-DDTHH:MM:SSZ with a month from 01 to 12, a day that month has, hours to 23, minutes and seconds to 59",
                at: index - "</date>".utf8.count - text.count)
        }
        guard
            // A leap second, and years far from today, are Foundation's to interpret.
            text[17] < UInt8(ascii: "6"), text[0] == UInt8(ascii: "1") || text[0] == UInt8(ascii: "2"),
            let date = ISO8601Text.date(from: String(decoding: text, as: UTF8.self))
        else { return nil }
        return .date(date)
    }

    /// Base64, possibly broken over lines and indented.
    private mutating func parseData() -> DefaultsValue? {
        guard let text = parsePlainText(closing: "</data>") else { return nil }
        var compact: [UInt8] = []
        compact.reserveCapacity(text.count)
        for byte in text where !isWhitespace(byte) { compact.append(byte) }
        // Unpadded base64 reads as Foundation reads it.
        if compact.count % 4 != 0, compact.last != UInt8(ascii: "=") {
            compact += Array(repeating: UInt8(ascii: "="), count: 4 - compact.count % 4)
        }
        guard let data = Data(base64Encoded: Data(compact)) else {
            // Foundation would read it as empty data, and the next write would store that.
            return fail(
                "the <data> element is not base64 (letters, digits, '+', '/', and '=' padding to a multiple of 4 characters)",
                at: index - "</data>".utf8.count - text.count)
        }
        return .data(data)
    }

    // MARK: - Members (the incremental re-read, see PropertyListXMLSuiteIndex)

    /// The key of the `<key>` element at `range` (with its tags), or `nil` when it is not one this reader reads.
    static func key(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> String? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        guard reader.consume("<key>"), let key = reader.parseText(closing: "</key>"),
            reader.index == range.upperBound, reader.failure == nil
        else { return nil }
        return key
    }

    /// The value of the element at `range`, read as a value of the top-level dictionary; `nil` when this
    /// reader leaves it to `PropertyListSerialization` or it is an error (a full parse then decides).
    static func memberValue(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> DefaultsValue? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        guard let value = reader.parseValue(depth: 2), reader.index == range.upperBound, reader.failure == nil else {
            return nil
        }
        return value
    }

    /// The members of a suite document: each `<key>` element of the top-level dictionary and the value
    /// element after it, delimited, not read (one whose bytes are not those of a member read before is
    /// read with ``memberValue(in:at:)``). Whitespace only: none. `nil` when the document is not one this
    /// reader reads, with a dictionary at the top.
    ///
    /// With `end`, the scan stops at a member where a previous member starts in the bytes the previous
    /// version ends with (see ``SuiteIndex/CommonEnd``); `sameAtEnd` is how many members it took from there.
    static func scanSuiteMembers(
        _ bytes: UnsafeBufferPointer<UInt8>, end: SuiteIndex.CommonEnd? = nil
    ) -> (members: [SuiteIndex.Member], sameAtEnd: Int)? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.skipWhitespace()
        if reader.index == bytes.count { return ([], 0) }
        let scan = reader.parseDocument { reader -> (members: [SuiteIndex.Member], sameAtEnd: Int)? in
            if reader.consume("<dict/>") { return ([], 0) }
            guard reader.consume("<dict>") else { return nil }
            var members: [SuiteIndex.Member] = []
            guard let taken = reader.scanMembers(into: &members, end: end) else { return nil }
            reader.restWasRead = taken > 0
            return (members, taken)
        }
        return reader.failure == nil ? scan : nil
    }

    /// Scans the members of the top-level dictionary from `start` (just after a member) to the end of the
    /// document; see ``SuiteIndex/scan(_:previous:previousMembers:scanAll:scanRest:)``. Returns how many
    /// members were taken from the common end, or `nil`.
    static func scanSuiteMembers(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into members: inout [SuiteIndex.Member],
        end: SuiteIndex.CommonEnd
    ) -> Int? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = start
        guard let taken = reader.scanMembers(into: &members, end: end) else { return nil }
        // Members taken from the common end are followed by the previous file's end, which was read.
        if taken > 0 { return taken }
        reader.skipWhitespace()
        guard reader.consume("</plist>") else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? 0 : nil
    }

    /// Members up to and including `</dict>`; with `end`, a member where a previous one starts in the
    /// common end begins the previous file's last members (see ``SuiteIndex/CommonEnd``).
    private mutating func scanMembers(into members: inout [SuiteIndex.Member], end: SuiteIndex.CommonEnd?) -> Int? {
        while true {
            skipWhitespace()
            if consume("</dict>") { return 0 }
            if let end, let taken = end.appendMembers(startingAt: index, to: &members) { return taken }
            let keyStart = index
            guard consume("<key>") else { return nil }
            while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
            guard consume("</key>") else { return nil }
            let key = keyStart..<index
            skipWhitespace()
            let valueStart = index
            guard skipElement() else { return nil }
            members.append(SuiteIndex.Member(key: key, value: valueStart..<index))
        }
    }

    /// Moves past the element starting at `index` and everything inside it (text is skipped, nested
    /// elements counted); `false` at a comment, CDATA section, processing instruction or the end.
    private mutating func skipElement() -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { return false }
        var depth = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return false }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { return false }
            var close = index + 1
            while close < bytes.count, bytes[close] != UInt8(ascii: ">") { close += 1 }
            guard close < bytes.count else { return false }
            if next == UInt8(ascii: "/") {
                depth -= 1
            } else if bytes[close - 1] != UInt8(ascii: "/") {
                depth += 1
            }
            index = close + 1
            if depth <= 0 { return depth == 0 }
        }
        return false
    }

    // MARK: - Helpers

    /// Whether XML 1.0 allows the character `value` in a document (its `Char` production).
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: true
        default: false
        }
    }

    private func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    private func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private func digitValue(_ byte: UInt8, radix: UInt32) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
    }

    private func startsWith(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard index + expected.count <= bytes.count else { return false }
            for offset in 0..<expected.count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
    }

    private mutating func consume(_ literal: StaticString) -> Bool {
        guard startsWith(literal) else { return false }
        index += literal.utf8CodeUnitCount
        return true
    }

    private func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard range.count == expected.count else { return false }
            for offset in 0..<expected.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }
    }

    private func position(of literal: StaticString) -> Int? {
        var position = index
        return literal.withUTF8Buffer { expected in
            while position + expected.count <= bytes.count {
                var found = true
                for offset in 0..<expected.count where bytes[position + offset] != expected[offset] {
                    found = false
                    break
                }
                if found { return position }
                position += 1
            }
            return nil
        }
    }
}
