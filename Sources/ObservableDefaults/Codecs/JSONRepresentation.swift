import Foundation

/// How values that JSON has no type for are stored in a JSON suite: a date as an ISO 8601 UTC string
/// with exactly three fractional digits (`2024-05-01T12:30:00.123Z`, rounded to the nearest millisecond),
/// data as a padded standard-alphabet base64 string.
enum JSONRepresentation {
    /// The string a date is stored as.
    static func string(for date: Date) -> String {
        ISO8601Text.millisecondString(for: date)
    }

    /// The string data is stored as.
    static func string(for data: Data) -> String {
        data.base64EncodedString()
    }

    /// The value as it reads back from a JSON file: dates and data become strings, at any depth.
    static func normalize(_ value: DefaultsValue) -> DefaultsValue {
        switch value {
        case .string, .integer, .double, .bool: value
        case .date(let date): .string(string(for: date))
        case .data(let data): .string(string(for: data))
        case .array(let array): .array(array.map(normalize))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(normalize))
        }
    }
}
