/// The text of numbers in a JSON suite file that the writer would spell differently, so that a write
/// of other keys leaves them as they are.
///
/// The value model holds a JSON number as `Int` or `Double`; some numbers it cannot hold exactly:
/// `12345678901234567891` (beyond `Int`) reads as the nearest double, `1e400` as infinity, and
/// `0.1000000000000000055511` as `0.1`. Written again from the model they would become
/// `1.2345678901234567e19`, a non-JSON `Infinity`, or `0.1`. Each such number's text is recorded here,
/// under the top-level key it belongs to and the double it reads as; the writer uses the text for that
/// double. A recorded text reads back as exactly that double, so using it never changes a value, even
/// for a key set since (its spellings are dropped when the key is read or written again).
struct JSONNumberSpellings: Sendable, Equatable {
    private var byKey: [ExactKey: [UInt64: String]] = [:]

    /// Whether no number needs its text kept.
    var isEmpty: Bool { byKey.isEmpty }

    /// Records `text` as the spelling of `double` in the value of top-level `key`.
    mutating func record(_ text: String, for double: Double, key: String) {
        byKey[ExactKey(key), default: [:]][Self.slot(double)] = text
    }

    /// The text recorded for `double` in the value of top-level `key`.
    func spelling(of double: Double, key: String) -> String? {
        byKey[ExactKey(key)]?[Self.slot(double)]
    }

    /// The spellings of one top-level key's value.
    func spellings(forKey key: String) -> [UInt64: String]? { byKey[ExactKey(key)] }

    /// Replaces the spellings of `key` with `spellings` (`nil` or empty: it has none).
    mutating func set(_ spellings: [UInt64: String]?, forKey key: String) {
        byKey[ExactKey(key)] = spellings?.isEmpty == false ? spellings : nil
    }

    /// The lookup key of a double: its bit pattern, with every NaN alike.
    static func slot(_ double: Double) -> UInt64 {
        double.isNaN ? Double.nan.bitPattern : double.bitPattern
    }
}
