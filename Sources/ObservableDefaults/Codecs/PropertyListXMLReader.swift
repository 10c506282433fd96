import Foundation

/// The library's reader of XML property lists, producing the value model directly. Every XML property
/// list is read here (none is left to `PropertyListSerialization`), and every error it reports names its
/// line and column.
///
/// It reads what Apple's tools write and what Foundation's reader accepts as valid: an XML declaration
/// (UTF-8, or UTF-16 with a byte-order mark), a DOCTYPE without an internal subset, comments and processing
/// instructions between elements and in text, CDATA sections, the five predefined entities and character
/// references, attributes, empty elements, CR and CRLF line ends, `<plist>` or a bare root element. Values
/// Foundation would read as something else (an integer beyond 64 bits, a date with a field out of range,
/// data that is not base64, a duplicate key) are errors: the next write would otherwise store the guess.
/// The forms of each value are in ``parseInteger()``, ``parseReal()``, ``parseDate()`` and ``parseData()``;
/// the rules are listed in the DocC article *Suites and files*.
struct PropertyListXMLReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let fileURL: URL?
    var index = 0
    /// The first error met; parsing then unwinds by returning `nil`.
    var failure: DefaultsError?
    /// The rest of the document after the top-level value was read before (a scan that reached the bytes
    /// the previous version ends with): ``parseDocument(_:)`` does not check it again.
    var restWasRead = false
    /// Whether the file was UTF-16 (with a byte-order mark), transcoded to the UTF-8 in ``bytes``.
    var wasUTF16 = false

    /// Containers nested deeper than this are rejected (as in ``JSONReader``).
    static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>, fileURL: URL?) {
        self.bytes = bytes
        self.fileURL = fileURL
    }

    /// The document's top-level value, or a thrown error with its line and column.
    static func parse(_ data: Data, fileURL: URL? = nil) throws(DefaultsError) -> DefaultsValue {
        try read(data, fileURL: fileURL) { $0.parseValue(depth: 1, in: .top) }
    }

    /// The top-level dictionary of a suite file, its keys told apart by their bytes (see ``ExactKey``);
    /// another top-level value is an error.
    static func parseSuite(_ data: Data, fileURL: URL? = nil) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        try read(data, fileURL: fileURL) { $0.parseTopDictionary() }
    }

    /// Reads a document whose top-level value `parseTop` reads, after bringing its text to UTF-8.
    private static func read<T>(
        _ data: Data, fileURL: URL?, _ parseTop: (inout PropertyListXMLReader) -> T?
    ) throws(DefaultsError) -> T {
        let result: Result<T, DefaultsError> = data.withUnsafeBytes { raw in
            XMLTextEncoding.withUTF8(raw.bindMemory(to: UInt8.self), fileURL: fileURL) { bytes, wasUTF16 in
                var reader = PropertyListXMLReader(bytes: bytes, fileURL: fileURL)
                reader.wasUTF16 = wasUTF16
                let value = reader.parseDocument(parseTop)
                if let failure = reader.failure { return .failure(failure) }
                guard let value else {
                    // Every path that gives up records why; this is a guard, still with a position.
                    return .failure(reader.error("the property list could not be read here", at: reader.index))
                }
                return .success(value)
            }
        }
        return try result.get()
    }

    /// A `malformedFile` error at byte `offset`, with its line and column.
    func error(_ message: String, at offset: Int) -> DefaultsError {
        let position = TextPosition(of: offset, in: bytes)
        return DefaultsError(
            .malformedFile, message: message, fileURL: fileURL, line: position.line, column: position.column)
    }

    /// Records an error at byte `offset` (the first one wins) and returns `nil` to unwind.
    mutating func fail<T>(_ message: String, at offset: Int) -> T? {
        if failure == nil { failure = error(message, at: offset) }
        return nil
    }

    // MARK: - Document

    /// The prolog, the root (`<plist>` holding one value, or a bare value element) and what may follow it.
    mutating func parseDocument<T>(_ parseTop: (inout PropertyListXMLReader) -> T?) -> T? {
        skipWhitespace()
        if startsWith("<?xml"), index + 5 < bytes.count,
            bytes[index + 5] == UInt8(ascii: "?") || isWhitespace(bytes[index + 5])
        {
            guard parseDeclaration() else { return nil }
        }
        skipMisc()
        if startsWith("<!DOCTYPE") {
            guard skipDoctype() else { return nil }
            skipMisc()
        }
        guard failure == nil else { return nil }
        let value: T
        if startsWith("<plist"), index + 6 < bytes.count,
            bytes[index + 6] == UInt8(ascii: ">") || bytes[index + 6] == UInt8(ascii: "/")
                || isWhitespace(bytes[index + 6])
        {
            let plistStart = index
            index += 6
            guard let isEmpty = finishOpenTag("plist") else { return nil }
            if isEmpty { return fail("empty <plist/>: expected one value inside <plist>", at: plistStart) }
            skipMisc()
            guard let top = parseTop(&self) else { return nil }
            if restWasRead { return top }
            skipMisc()
            guard expectClose("</plist>", after: "after the value (a <plist> holds one value)") else { return nil }
            value = top
        } else {
            guard let top = parseTop(&self) else { return nil }
            value = top
        }
        skipMisc()
        guard index == bytes.count else {
            return fail("expected end of file after the top-level element, found \(found())", at: index)
        }
        return failure == nil ? value : nil
    }

    /// The suite's dictionary; another top-level value is an error at its start.
    private mutating func parseTopDictionary() -> [ExactKey: DefaultsValue]? {
        if consume("<dict>") { return parseDictionary(depth: 1, keyedBy: { ExactKey($0) }) }
        let start = index
        if startsWith("<dict"), index + 5 < bytes.count,
            bytes[index + 5] == UInt8(ascii: "/") || isWhitespace(bytes[index + 5])
        {
            index += 5
            guard let isEmpty = finishOpenTag("dict") else { return nil }
            return isEmpty ? [:] : parseDictionary(depth: 1, keyedBy: { ExactKey($0) })
        }
        guard let value = parseValue(depth: 1, in: .top) else { return nil }
        return fail(
            "expected a dictionary at the top level of a suite file, found \(value.typeName.withIndefiniteArticle)",
            at: start)
    }

    // MARK: - Values

    /// Where a value stands, for the message when it is missing.
    enum ValueContext {
        /// The document's one value (inside `<plist>`, or the bare root).
        case top
        /// An element of an `<array>`.
        case array
        /// The value of the key in a `<dict>`.
        case member(String)

        /// Where the value stands, as a message says it.
        var text: String {
            switch self {
            case .top: "as the document's value"
            case .array: "in an <array>"
            case .member(let key): "for the key '\(key.count > 40 ? key.prefix(40) + "…" : key)'"
            }
        }
    }

    /// The value element at `index` (whitespace and comments before it were skipped).
    mutating func parseValue(depth: Int, in context: ValueContext) -> DefaultsValue? {
        if depth > Self.maximumDepth {
            return fail("containers are nested more than \(Self.maximumDepth) levels deep", at: index)
        }
        let start = index
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { return expectedValue(context) }
        index += 1
        // The name's bytes packed into a word as they are scanned (see ValueElement).
        let nameStart = index
        var word: UInt64 = 0
        while index < bytes.count, isNameByte(bytes[index]) {
            if index - nameStart < 8 { word |= UInt64(bytes[index]) << (8 * (index - nameStart)) }
            index += 1
        }
        guard index - nameStart < 8, let element = ValueElement(word: word) else {
            index = start
            return expectedValue(context)
        }
        if element == .key {
            index = start
            return fail(
                "expected a value \(context.text), found '<key>' (a <key> stands only in a <dict>, before its value)",
                at: start)
        }
        let isEmpty: Bool
        if index < bytes.count, bytes[index] == UInt8(ascii: ">") {
            index += 1
            isEmpty = false
        } else if startsWith("/>") {
            index += 2
            isEmpty = true
        } else {
            guard let empty = finishOpenTag(element.name) else { return nil }
            isEmpty = empty
        }
        switch element {
        case .dict:
            return isEmpty
                ? .dictionary([:]) : parseDictionary(depth: depth, keyedBy: { $0 }).map(DefaultsValue.dictionary)
        case .array:
            return isEmpty ? .array([]) : parseArray(depth: depth).map(DefaultsValue.array)
        case .string:
            return isEmpty ? .string("") : parseText(closing: "</string>", element: "string").map(DefaultsValue.string)
        case .true, .false:
            if !isEmpty {
                let closing: StaticString = element == .true ? "</true>" : "</false>"
                guard expectClose(closing, after: "(it holds nothing; <\(element.name)/> is the usual form)") else {
                    return nil
                }
            }
            return .bool(element == .true)
        case .data:
            return isEmpty ? .data(Data()) : parseData()
        case .integer, .real, .date:
            if isEmpty {
                return fail("empty <\(element.name)/>: expected \(element.expectation)", at: start)
            }
            switch element {
            case .integer: return parseInteger()
            case .real: return parseReal()
            default: return parseDate()
            }
        case .key:
            return nil
        }
    }

    private mutating func expectedValue(_ context: ValueContext) -> DefaultsValue? {
        fail(
            "expected a value (<string>, <integer>, <real>, <true/>, <false/>, <date>, <data>, <array> or <dict>) \(context.text), found \(found())",
            at: index)
    }

    /// A dictionary whose keys are made by `makeKey`; two keys equal by `Key`'s equality are an error at the
    /// second (which one a reader keeps is a guess, and a person's typo would silently lose a value).
    private mutating func parseDictionary<Key: Hashable>(
        depth: Int, keyedBy makeKey: (String) -> Key
    ) -> [Key: DefaultsValue]? {
        // Collected first, then inserted into a dictionary of the final size (no rehash per doubling).
        var members: [(key: String, value: DefaultsValue, offset: Int)] = []
        while true {
            skipMisc()
            if startsTag(with: UInt8(ascii: "/")) {
                guard expectClose("</dict>", after: "or '<key>' in a <dict>") else { return nil }
                break
            }
            let keyStart = index
            guard startsTag(with: UInt8(ascii: "k")), startsWith("<key"), index + 4 < bytes.count,
                bytes[index + 4] == UInt8(ascii: ">") || bytes[index + 4] == UInt8(ascii: "/")
                    || isWhitespace(bytes[index + 4])
            else { return fail("expected '<key>' or '</dict>' in a <dict>, found \(found())", at: index) }
            index += 4
            let key: String
            if consume(">") {
                guard let text = parseText(closing: "</key>", element: "key") else { return nil }
                key = text
            } else {
                guard let isEmpty = finishOpenTag("key") else { return nil }
                if isEmpty {
                    key = ""
                } else {
                    guard let text = parseText(closing: "</key>", element: "key") else { return nil }
                    key = text
                }
            }
            skipMisc()
            guard let value = parseValue(depth: depth + 1, in: .member(key)) else { return nil }
            members.append((key, value, keyStart))
        }
        var dictionary = [Key: DefaultsValue](minimumCapacity: members.count)
        var duplicate: (key: String, offset: Int)?
        members.withUnsafeMutableBufferPointer { members in
            for position in members.indices {
                // Moved out, not copied; an empty key and value are left for the array to release.
                let (key, value, offset) = members.moveElement(from: position)
                members.initializeElement(at: position, to: ("", .bool(false), offset))
                if dictionary.updateValue(value, forKey: makeKey(key)) != nil, duplicate == nil {
                    duplicate = (key, offset)
                }
            }
        }
        if let duplicate {
            return reportDuplicate(duplicate, among: members.map(\.offset), keyedBy: makeKey)
        }
        return dictionary
    }

    /// The error for a key met twice, naming where the first one is.
    private mutating func reportDuplicate<Key: Hashable, T>(
        _ duplicate: (key: String, offset: Int), among offsets: [Int], keyedBy makeKey: (String) -> Key
    ) -> T? {
        let first = offsets.first { offset in
            offset < duplicate.offset && Self.key(in: bytes, at: offset).map(makeKey) == makeKey(duplicate.key)
        }
        let firstText = first.map { offset in
            let position = TextPosition(of: offset, in: bytes)
            return " (first at line \(position.line), column \(position.column))"
        }
        return fail(
            "duplicate key '\(duplicate.key)' in a <dict>\(firstText ?? ""): each key may stand once; remove one of them",
            at: duplicate.offset)
    }

    private mutating func parseArray(depth: Int) -> [DefaultsValue]? {
        var array: [DefaultsValue] = []
        while true {
            skipMisc()
            if startsTag(with: UInt8(ascii: "/")) {
                guard expectClose("</array>", after: "or a value in an <array>") else { return nil }
                return array
            }
            guard let value = parseValue(depth: depth + 1, in: .array) else { return nil }
            array.append(value)
        }
    }

    // MARK: - Helpers

    /// Whether XML 1.0 allows the character `value` in a document (its `Char` production).
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: true
        default: false
        }
    }

    func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    func digitValue(_ byte: UInt8, radix: UInt32) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
    }

    @inline(__always)
    func startsWith(_ literal: StaticString) -> Bool {
        startsWith(literal, at: index)
    }

    @inline(__always)
    func startsWith(_ literal: StaticString, at offset: Int) -> Bool {
        // The literals are ASCII text; reading their bytes directly avoids a closure call per comparison.
        guard literal.hasPointerRepresentation else {
            return literal.withUTF8Buffer { expected in
                offset + expected.count <= bytes.count
                    && (0..<expected.count).allSatisfy { bytes[offset + $0] == expected[$0] }
            }
        }
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        let expected = literal.utf8Start
        for position in 0..<count where bytes[offset + position] != expected[position] { return false }
        return true
    }

    /// Whether the bytes at `index` are `<` followed by `second`.
    func startsTag(with second: UInt8) -> Bool {
        index + 1 < bytes.count && bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == second
    }

    mutating func consume(_ literal: StaticString) -> Bool {
        guard startsWith(literal) else { return false }
        index += literal.utf8CodeUnitCount
        return true
    }

    func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard range.count == expected.count else { return false }
            for offset in 0..<expected.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }
    }

    /// The first offset from `index` where `literal` starts.
    func position(of literal: StaticString) -> Int? {
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

/// The value elements of a property list (and `<key>`, which stands only in a dictionary).
enum ValueElement: Equatable {
    /// One element each, named as in the file.
    case dict, array, string, key, integer, real, date, data, `true`, `false`

    /// The element whose name is packed in `word`, its first byte lowest (names are at most 7 bytes), or
    /// `nil`. One integer comparison per name, on the path every value takes.
    init?(word: UInt64) {
        switch word {
        case 0x676E69727473: self = .string  // "string", first byte lowest
        case 0x79656B: self = .key  // "key", first byte lowest
        case 0x72656765746E69: self = .integer  // "integer", first byte lowest
        case 0x6C616572: self = .real  // "real", first byte lowest
        case 0x74636964: self = .dict  // "dict", first byte lowest
        case 0x7961727261: self = .array  // "array", first byte lowest
        case 0x65757274: self = .true  // "true", first byte lowest
        case 0x65736C6166: self = .false  // "false", first byte lowest
        case 0x65746164: self = .date  // "date", first byte lowest
        case 0x61746164: self = .data  // "data", first byte lowest
        default: return nil
        }
    }

    /// The element's name, as written in its tags.
    var name: String {
        switch self {
        case .dict: "dict"
        case .array: "array"
        case .string: "string"
        case .key: "key"
        case .integer: "integer"
        case .real: "real"
        case .date: "date"
        case .data: "data"
        case .true: "true"
        case .false: "false"
        }
    }

    /// What the text of a number or date element must be.
    var expectation: String {
        switch self {
        case .integer: "a decimal integer such as -42, or a hexadecimal one such as 0x2A"
        case .real: "a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"
        case .date: "a date in the form YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)"
        default: "its content"
        }
    }
}
