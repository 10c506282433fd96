import Foundation

/// The text of `<integer>`, `<real>`, `<date>` and `<data>`: each read in the forms Foundation reads, and
/// every other text an error at its line and column (never a guess the next write would store).
extension PropertyListXMLReader {
    /// The text up to `closing` (no references, CDATA or comments: Foundation reads none in these
    /// elements), as a range of ``bytes``.
    private mutating func parseScalarText(closing: StaticString, element: ValueElement) -> Range<Int>? {
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
        guard index < bytes.count else {
            return fail("unterminated <\(element.name)>: expected '\(closing)', found end of file", at: start)
        }
        let text = start..<index
        guard expectClose(closing, after: "after \(element.expectation)") else { return nil }
        return text
    }

    /// The text at `range` in quotes for a message, cut after 40 characters.
    private func quoted(_ range: Range<Int>) -> String {
        let text = text(range)
        return "'" + (text.count > 40 ? text.prefix(40) + "…" : text) + "'"
    }

    /// `[+-]?[0-9]+` or `[+-]?0[xX][0-9a-fA-F]+`, fitting in `Int`; digits that do not fit are an error
    /// (Foundation would read them as an unsigned number or a string, and the next write would store that).
    mutating func parseInteger() -> DefaultsValue? {
        guard let range = parseScalarText(closing: "</integer>", element: .integer) else { return nil }
        guard !range.isEmpty else {
            return fail("empty <integer>: expected \(ValueElement.integer.expectation)", at: range.lowerBound)
        }
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative || bytes[position] == UInt8(ascii: "+") { position += 1 }
        var radix = 10
        if position + 1 < range.upperBound, bytes[position] == UInt8(ascii: "0"),
            bytes[position + 1] == UInt8(ascii: "x") || bytes[position + 1] == UInt8(ascii: "X")
        {
            radix = 16
            position += 2
        }
        let digitName = radix == 16 ? "a hexadecimal digit" : "a digit"
        guard position < range.upperBound else {
            return fail("expected \(digitName) in <integer>, found \(found(at: position))", at: position)
        }
        // Accumulated as a negative number so that Int.min fits.
        var accumulated = 0
        var tooLarge = false
        while position < range.upperBound {
            guard let digit = digitValue(bytes[position], radix: UInt32(radix)) else {
                return fail(
                    "expected \(digitName) in <integer>, found \(found(at: position)) (\(ValueElement.integer.expectation))",
                    at: position)
            }
            let (scaled, overflow1) = accumulated.multipliedReportingOverflow(by: radix)
            let (next, overflow2) = scaled.subtractingReportingOverflow(Int(digit))
            if overflow1 || overflow2 { tooLarge = true }
            accumulated = next
            position += 1
        }
        if !tooLarge, negative { return .integer(accumulated) }
        if !tooLarge, accumulated != .min { return .integer(-accumulated) }
        return fail(
            "the integer \(text(range)) does not fit in 64 bits (from -9223372036854775808 to 9223372036854775807)",
            at: range.lowerBound)
    }

    /// `[+-]?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][+-]?[0-9]+)?` (`5`, `.5`, `5.`, `1e-3`), or `inf`, `infinity`
    /// with an optional sign and `nan`, in any case (as Foundation reads them).
    mutating func parseReal() -> DefaultsValue? {
        guard let range = parseScalarText(closing: "</real>", element: .real) else { return nil }
        let end = range.upperBound
        var position = range.lowerBound
        func skipDigits() -> Int {
            let start = position
            while position < end, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                position += 1
            }
            return position - start
        }
        if position < end, bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
            position += 1
        }
        let unsignedStart = position
        var digits = skipDigits()
        if position < end, bytes[position] == UInt8(ascii: ".") {
            position += 1
            digits += skipDigits()
        }
        guard digits > 0 else {
            switch text(unsignedStart..<end).lowercased() {
            case "inf", "infinity":
                return .double(bytes[range.lowerBound] == UInt8(ascii: "-") ? -.infinity : .infinity)
            case "nan" where unsignedStart == range.lowerBound: return .double(.nan)
            default: return invalidReal(range)
            }
        }
        if position < end, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < end, bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
                position += 1
            }
            guard skipDigits() > 0 else { return invalidReal(range) }
        }
        guard position == end, let double = Double(text(range)) else { return invalidReal(range) }
        return .double(double)
    }

    private mutating func invalidReal(_ range: Range<Int>) -> DefaultsValue? {
        if range.isEmpty {
            return fail("empty <real>: expected \(ValueElement.real.expectation)", at: range.lowerBound)
        }
        return fail("\(quoted(range)) is not a real: expected \(ValueElement.real.expectation)", at: range.lowerBound)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (a `-` before the year for years before 1 BC's year 0), the form writers emit.
    /// A month, day, hour, minute or second out of range is an error (Foundation would roll
    /// `2024-13-45T99:99:99Z` over into another date, and the next write would store that date); a leap
    /// second (`:60`) reads as the second after `:59`, as Foundation reads it.
    mutating func parseDate() -> DefaultsValue? {
        guard let range = parseScalarText(closing: "</date>", element: .date) else { return nil }
        let negative = !range.isEmpty && bytes[range.lowerBound] == UInt8(ascii: "-")
        let start = range.lowerBound + (negative ? 1 : 0)
        func at(_ offset: Int, is character: Unicode.Scalar) -> Bool {
            bytes[start + offset] == UInt8(ascii: character)
        }
        func field(_ offsets: Range<Int>) -> Int? {
            var value = 0
            for offset in offsets {
                guard let digit = digitValue(bytes[start + offset], radix: 10) else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard range.upperBound - start == 20, at(4, is: "-"), at(7, is: "-"), at(10, is: "T"), at(13, is: ":"),
            at(16, is: ":"), at(19, is: "Z"), let year = field(0..<4), let month = field(5..<7),
            let day = field(8..<10), let hour = field(11..<13), let minute = field(14..<16),
            let second = field(17..<19)
        else {
            if range.isEmpty {
                return fail("empty <date>: expected \(ValueElement.date.expectation)", at: range.lowerBound)
            }
            return fail(
                "\(quoted(range)) is not a date: expected \(ValueElement.date.expectation)", at: range.lowerBound)
        }
        let signedYear = negative ? -year : year
        let isLeapYear = signedYear % 4 == 0 && (signedYear % 100 != 0 || signedYear % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour <= 23, minute <= 59,
            second <= 60
        else {
            return fail(
                "\(quoted(range)) is not a date: expected YYYY-MM-DDTHH:MM:SSZ with a month from 01 to 12, a day that month has, hours to 23, minutes and seconds to 59",
                at: range.lowerBound)
        }
        let days = ISO8601Text.daysSince1970(year: signedYear, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return .date(Date(timeIntervalSince1970: Double(seconds)))
    }

    /// Base64, possibly broken over lines and indented; unpadded base64 reads as its bytes (Foundation:
    /// empty data). Anything else is an error (Foundation would read it as empty data, and the next write
    /// would store that).
    mutating func parseData() -> DefaultsValue? {
        guard let range = parseScalarText(closing: "</data>", element: .data) else { return nil }
        var compact: [UInt8] = []
        compact.reserveCapacity(range.count)
        for offset in range where !isWhitespace(bytes[offset]) { compact.append(bytes[offset]) }
        if compact.count % 4 != 0, compact.last != UInt8(ascii: "=") {
            compact += Array(repeating: UInt8(ascii: "="), count: 4 - compact.count % 4)
        }
        guard let data = Data(base64Encoded: Data(compact)) else {
            return fail(
                "the <data> element is not base64 (letters, digits, '+', '/', and '=' padding to a multiple of 4 characters)",
                at: range.lowerBound)
        }
        return .data(data)
    }
}
