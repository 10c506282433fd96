import Foundation
import ObservableDefaults

/// Dates and data as a JSON suite stores them (JSON has no type for either): the strings are shown to
/// people the way a plist suite's dates and data are shown.
///
/// Only the exact forms the library writes are recognized, so ordinary text is never mistaken for them:
/// a date is `2024-05-01T12:30:00Z` or `2024-05-01T12:30:00.250Z` (UTC); data is padded base64 (ending in
/// `=`). Data whose length is a multiple of three has no padding and is indistinguishable from a word
/// (`"dark"` is valid base64), so it is shown as the string it is.
enum JSONSuiteText {
    /// `value` with recognized strings turned into dates and data, at any depth.
    static func interpret(_ value: DefaultsValue) -> DefaultsValue {
        switch value {
        case .string(let text):
            date(in: text).map(DefaultsValue.date) ?? data(in: text).map(DefaultsValue.data) ?? value
        case .array(let items): .array(items.map(interpret))
        case .dictionary(let entries): .dictionary(entries.mapValues(interpret))
        default: value
        }
    }

    /// What a string holds, for `read-type`: `"an ISO 8601 date"`, `"base64 data, 2 bytes"`, or `nil`.
    static func description(of text: String) -> String? {
        if date(in: text) != nil { return "an ISO 8601 date" }
        if let bytes = data(in: text) { return "base64 data, \(bytes.count) \(bytes.count == 1 ? "byte" : "bytes")" }
        return nil
    }

    static func date(in text: String) -> Date? {
        let shape = Array(text.utf8)
        guard shape.count == 20 || shape.count == 24, shape.last == UInt8(ascii: "Z"), shape[10] == UInt8(ascii: "T")
        else {
            return nil
        }
        if shape.count == 24 && shape[19] != UInt8(ascii: ".") { return nil }
        guard let date = DateText.parse(text), DateText.iso8601(date).hasPrefix(String(text.dropLast())) else {
            return nil
        }
        return date
    }

    static func data(in text: String) -> Data? {
        guard text.hasSuffix("="), text.count % 4 == 0, let bytes = Data(base64Encoded: text),
            bytes.base64EncodedString() == text
        else { return nil }
        return bytes
    }
}
