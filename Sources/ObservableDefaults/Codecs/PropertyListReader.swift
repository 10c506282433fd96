import Foundation

/// Reads XML and binary property lists and maps them onto the value model exactly: `<true/>`/`<false/>`
/// → `.bool`, `<integer>` → `.integer`, `<real>` → `.double` (even `<real>5</real>`), `<date>` → `.date`,
/// `<data>` → `.data`.
///
/// Binary property lists are read only by ``BinaryPropertyListReader`` (bounded; swift-corelibs-foundation
/// crashes on some binary inputs). XML is read by ``PropertyListXMLReader``; only documents that are XML
/// (they start with `<`) using features that reader leaves out (comments, CDATA, carriage returns, other
/// encodings) go to `PropertyListSerialization`. On Linux it hands booleans back as Swift `Bool`,
/// integers as `NSNumber`s whose `objCType` is an integer type, and reals as `NSNumber`s with `objCType`
/// `d`; ``DefaultsValue/init(any:)`` tells them apart.
enum PropertyListReader {
    /// Parses a whole suite file: a top-level dictionary, or nothing but whitespace (an empty suite).
    ///
    /// Top-level keys are told apart by their bytes (see ``ExactKey``), except in the XML documents left to
    /// `PropertyListSerialization`, whose dictionaries have `String` keys.
    static func parseSuite(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return [:] }
        if BinaryPropertyListReader.isBinaryPropertyList(data) {
            return try BinaryPropertyListReader.parseSuite(data, fileURL: fileURL)
        }
        // The common XML layout is read by our own reader (about ten times faster), which also reports
        // the errors it can place; other XML goes to PropertyListSerialization.
        switch try PropertyListXMLReader.parseSuite(data, fileURL: fileURL) {
        case .suite(let suite):
            return suite
        case .other(.value(let value)):
            return try topLevelDictionary(value, fileURL: fileURL)
        case .other(.unsupported):
            guard startsWithMarkup(data) else {
                throw DefaultsError(
                    .malformedFile,
                    message:
                        "not a property list: expected an XML document ('<?xml' or '<plist') or a binary property list ('bplist00')",
                    fileURL: fileURL, line: 1, column: 1)
            }
            return try parseWithFoundation(data, fileURL: fileURL)
        }
    }

    /// Reads the bytes with `PropertyListSerialization` and converts the result.
    static func parseWithFoundation(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw malformed(error, fileURL: fileURL)
        }
        guard let converted = DefaultsValue(any: object) else {
            throw DefaultsError(
                .malformedFile, message: "the property list holds a value that is not a property-list type",
                fileURL: fileURL)
        }
        return try topLevelDictionary(converted, fileURL: fileURL)
    }

    /// Whether the first character after whitespace (and a UTF-8 byte-order mark) is `<`: Foundation
    /// then reads the bytes as XML, not as the old text format, which suites never use.
    private static func startsWithMarkup(_ data: Data) -> Bool {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) == UInt8(ascii: "<")
    }

    static func topLevelDictionary(_ converted: DefaultsValue, fileURL: URL?) throws(DefaultsError) -> [ExactKey:
        DefaultsValue]
    {
        guard case .dictionary(let dictionary) = converted else {
            throw DefaultsError(
                .malformedFile,
                message:
                    "expected a dictionary at the top level of a suite file, found \(converted.typeName.withIndefiniteArticle)",
                fileURL: fileURL)
        }
        return dictionary.exactKeyed
    }

    /// Turns a parser error into a `malformedFile` error, keeping the parser's explanation and the line it
    /// names (`… on line 12`), when there is one.
    private static func malformed(_ error: any Error, fileURL: URL?) -> DefaultsError {
        let nsError = error as NSError
        let detail = (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
        return DefaultsError(
            .malformedFile, message: "not a valid property list: \(detail)", fileURL: fileURL,
            line: lineNumber(in: detail))
    }

    private static func lineNumber(in text: String) -> Int? {
        guard let range = text.range(of: "line ", options: .backwards) else { return nil }
        let digits = text[range.upperBound...].prefix(while: \.isASCII).prefix(while: \.isNumber)
        return Int(digits)
    }
}
