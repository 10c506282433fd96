import Foundation

/// How values are held in a property-list suite: as themselves, except that dates keep whole seconds
/// (rounded down), the precision of the XML `<date>` element.
enum PropertyListRepresentation {
    /// The value as it reads back from a property-list file.
    static func normalize(_ value: DefaultsValue) -> DefaultsValue {
        switch value {
        case .string, .integer, .double, .bool, .data: value
        case .date(let date): .date(wholeSeconds(date))
        case .array(let array): .array(array.map(normalize))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(normalize))
        }
    }

    /// The date rounded down to a whole second.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down))
    }
}
