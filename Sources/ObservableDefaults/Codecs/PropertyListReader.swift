import Foundation

/// Reads XML and binary property lists with `PropertyListSerialization` and maps the result onto the
/// value model exactly: `<true/>`/`<false/>` → `.bool`, `<integer>` → `.integer`, `<real>` → `.double`
/// (even `<real>5</real>`), `<date>` → `.date`, `<data>` → `.data`.
///
/// On Linux, swift-corelibs-foundation hands booleans back as Swift `Bool`, integers as `NSNumber`s whose
/// `objCType` is an integer type, and reals as `NSNumber`s with `objCType` `d`;
/// ``DefaultsValue/init(any:)`` tells them apart.
enum PropertyListReader {
    /// Parses a whole suite file: a top-level dictionary, or nothing but whitespace (an empty suite).
    static func parseSuite(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [String: DefaultsValue] {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return [:] }
        // The common XML layout is read by our own reader (about ten times faster); binary property
        // lists, anything unusual and every error go to PropertyListSerialization.
        if !data.starts(with: "bplist".utf8), let value = PropertyListXMLReader.parse(data) {
            return try topLevelDictionary(value, fileURL: fileURL)
        }
        return try parseWithFoundation(data, fileURL: fileURL)
    }

    /// Reads the bytes with `PropertyListSerialization` and converts the result.
    static func parseWithFoundation(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [String: DefaultsValue] {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw malformed(error, fileURL: fileURL)
        }
        guard let converted = DefaultsValue(any: object) else {
            throw DefaultsError(.malformedFile, message: "the property list holds a value that is not a property-list type", fileURL: fileURL)
        }
        return try topLevelDictionary(converted, fileURL: fileURL)
    }

    private static func topLevelDictionary(_ converted: DefaultsValue, fileURL: URL?) throws(DefaultsError) -> [String: DefaultsValue] {
        guard case .dictionary(let dictionary) = converted else {
            throw DefaultsError(
                .malformedFile,
                message: "expected a dictionary at the top level of a suite file, found \(articled(converted.typeName))",
                fileURL: fileURL)
        }
        return dictionary
    }

    private static func articled(_ typeName: String) -> String {
        (typeName.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + typeName
    }

    /// Turns a parser error into a `malformedFile` error, keeping the parser's explanation and the line it
    /// names (`… on line 12`), when there is one.
    private static func malformed(_ error: any Error, fileURL: URL?) -> DefaultsError {
        let nsError = error as NSError
        let detail = (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
        return DefaultsError(
            .malformedFile, message: "not a valid property list: \(detail)", fileURL: fileURL, line: lineNumber(in: detail))
    }

    private static func lineNumber(in text: String) -> Int? {
        guard let range = text.range(of: "line ", options: .backwards) else { return nil }
        let digits = text[range.upperBound...].prefix(while: \.isASCII).prefix(while: \.isNumber)
        return Int(digits)
    }
}
