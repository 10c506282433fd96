import Foundation

/// Formats and parses the ISO 8601 date-time forms the library reads and writes, without
/// `ISO8601DateFormatter` (not `Sendable`, and slow to create for every value).
///
/// Written form: `2024-05-01T12:30:00.123Z` (UTC, exactly three fractional digits, rounded to the nearest
/// millisecond) or, for whole seconds, `2024-05-01T12:30:00Z`. Read forms: `YYYY-MM-DDTHH:MM:SS`, an
/// optional fraction of any length, then `Z` or an offset `±HH:MM` / `±HHMM`.
enum ISO8601Text {
    private static let secondsPerDay: Int64 = 86_400
    /// Dates are clamped to years -9999...9999 so that every `Date` (even a non-finite one) formats.
    private static let secondRange: ClosedRange<Double> = -377_705_116_800...253_402_300_799

    private static func clampedSeconds(_ date: Date) -> Double {
        let seconds = date.timeIntervalSince1970
        return seconds.isNaN ? 0 : min(max(seconds, secondRange.lowerBound), secondRange.upperBound + 0.999)
    }

    /// The date rounded to the nearest millisecond, in UTC with three fractional digits.
    static func millisecondString(for date: Date) -> String {
        let milliseconds = Int64((clampedSeconds(date) * 1000).rounded())
        let seconds = milliseconds.floorDivided(by: 1000)
        let fraction = Int(milliseconds - seconds * 1000)
        return wholeSecondPart(seconds) + "." + String(fraction).leftPadded(to: 3) + "Z"
    }

    /// The date rounded down to the whole second, in UTC without a fraction.
    static func secondString(for date: Date) -> String {
        // Rounded on the reference-date scale, as `Date` stores it: adding the 1970 offset first could
        // round x.9999999 up to the next second.
        let sinceReference = date.timeIntervalSinceReferenceDate.rounded(.down)
        let clamped = Date(timeIntervalSinceReferenceDate: sinceReference.isNaN ? 0 : sinceReference)
        return wholeSecondPart(Int64(clampedSeconds(clamped))) + "Z"
    }

    private static func wholeSecondPart(_ secondsSince1970: Int64) -> String {
        let days = secondsSince1970.floorDivided(by: secondsPerDay)
        let secondOfDay = Int(secondsSince1970 - days * secondsPerDay)
        let (year, month, day) = civilDate(daysSince1970: days)
        let yearText = year < 0 ? "-" + String(-year).leftPadded(to: 4) : String(year).leftPadded(to: 4)
        return yearText + "-" + two(month) + "-" + two(day) + "T"
            + two(secondOfDay / 3600) + ":" + two(secondOfDay / 60 % 60) + ":" + two(secondOfDay % 60)
    }

    private static func two(_ value: Int) -> String { String(value).leftPadded(to: 2) }

    /// Parses an ISO 8601 date-time with a 4-digit year; `nil` when the text is not one.
    static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2),
            scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if scanner.skip(".") || scanner.skip(",") {
            let digits = scanner.digits()
            guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
            fraction = value
        }
        var offsetSeconds: Int64 = 0
        if scanner.skip("Z") || scanner.skip("z") {
            offsetSeconds = 0
        } else if let sign = scanner.sign() {
            guard let hours = scanner.number(digits: 2) else { return nil }
            _ = scanner.skip(":")
            guard let minutes = scanner.number(digits: 2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = Int64(sign * (hours * 3600 + minutes * 60))
        } else {
            return nil
        }
        guard scanner.isAtEnd else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * secondsPerDay + Int64(hour * 3600 + minute * 60 + second) - offsetSeconds
        if fraction == 0 { return Date(timeIntervalSince1970: Double(seconds)) }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    // Proleptic Gregorian calendar conversions (days counted from 1970-01-01), using 400-year eras so
    // that they are exact for negative days too.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilDate(daysSince1970 days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }

        mutating func number(digits count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        mutating func digits() -> String {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}

extension Int64 {
    /// Division rounding towards negative infinity.
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
