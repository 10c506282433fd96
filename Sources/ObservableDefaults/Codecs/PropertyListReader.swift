import Foundation

/// Reads XML and binary property lists and maps them onto the value model exactly: `<true/>`/`<false/>`
/// → `.bool`, `<integer>` → `.integer`, `<real>` → `.double` (even `<real>5</real>`), `<date>` → `.date`,
/// `<data>` → `.data`.
///
/// Binary property lists are read by ``BinaryPropertyListReader`` (bounded; swift-corelibs-foundation
/// crashes on some binary inputs; its errors name the byte offset), XML ones by ``PropertyListXMLReader``
/// (its errors name the line and column). Neither leaves anything to `PropertyListSerialization`, which
/// reads some invalid values as something else and reports errors without a position.
enum PropertyListReader {
    /// Parses a whole suite file: a top-level dictionary, or nothing but whitespace (an empty suite).
    ///
    /// Top-level keys are told apart by their bytes (see ``ExactKey``).
    static func parseSuite(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return [:] }
        if BinaryPropertyListReader.isBinaryPropertyList(data) {
            return try BinaryPropertyListReader.parseSuite(data, fileURL: fileURL)
        }
        guard startsWithMarkup(data) || XMLTextEncoding.hasUTF16ByteOrderMark(data) else {
            throw DefaultsError(
                .malformedFile,
                message:
                    "not a property list: expected an XML document ('<?xml' or '<plist') or a binary property list ('bplist00')",
                fileURL: fileURL, line: 1, column: 1)
        }
        return try PropertyListXMLReader.parseSuite(data, fileURL: fileURL)
    }

    /// Whether the first character after whitespace (and a UTF-8 byte-order mark) is `<`, as in every XML
    /// document (Foundation would read other text as the old text format, which suites never use).
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
}
