import Foundation

/// Values written as text without a type: the `defaults` tool's bare values, `-key value` arguments and
/// environment variables, parsed the way macOS `defaults write` parses a bare value.
///
/// - Old-style (OpenStep) property-list text: `{ a = 1; b = (x, "y z"); }` is a dictionary, `( 1, 2 )` an
///   array, `<0aff>` data. As on macOS, the leaves of old-style text are strings (`1` is the string "1").
/// - XML property-list fragments: `<integer>5</integer>`, `<dict>…</dict>`, `<array>…</array>` and the
///   other XML types, parsed by the library's property-list reader.
/// - Anything else is the string itself.
///
/// Text that starts like a property list (`{`, `(`, `<`) but does not parse is an error naming the position.
enum PropertyListText {
    /// The value `text` stands for.
    static func value(of text: String) throws(DefaultsError) -> DefaultsValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = trimmed.first else { return .string(text) }
        if first == "{" || first == "(" { return try oldStyle(text) }
        if first == "<" {
            // `<0a ff>` is old-style data (`<dict>` starts with a hex digit too: the whole tag decides).
            let tag = trimmed.dropFirst().prefix { $0 != ">" }
            if tag.allSatisfy({ $0.isHexDigit || $0.isWhitespace }) { return try oldStyle(text) }
            if let next = tag.first, next.isLetter || next == "?" || next == "!" { return try xml(text) }
        }
        return .string(text)
    }

    private static func oldStyle(_ text: String) throws(DefaultsError) -> DefaultsValue {
        var parser = OldStyleParser(text)
        do throws(OldStyleParser.Failure) {
            let value = try parser.document()
            return value
        } catch {
            throw DefaultsError(
                .unsupportedValue,
                message: "malformed property list value '\(text)': \(error.message) at character \(error.offset + 1)")
        }
    }

    private static func xml(_ text: String) throws(DefaultsError) -> DefaultsValue {
        // The fragment becomes the one value of a document the library's reader parses.
        let document =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>value</key>\n"
            + text + "\n</dict></plist>\n"
        let reason: String
        do throws(DefaultsError) {
            let decoded = try SuiteFormat.propertyList.decode(
                Data(document.utf8), fileURL: URL(fileURLWithPath: "/dev/null"))
            if let value = decoded[ExactKey("value")], decoded.count == 1 { return value }
            reason = "expected exactly one value"
        } catch {
            reason = Self.reason(error)
        }
        throw DefaultsError(.unsupportedValue, message: "malformed XML property list value '\(text)': \(reason)")
    }

    /// The reader's message without the wrapper document's positions.
    private static func reason(_ error: DefaultsError) -> String {
        var reason = error.message
        // A line number would count the lines of the wrapper document, not of the value.
        if let line = reason.range(of: #" on line \d+"#, options: .regularExpression) { reason.removeSubrange(line) }
        return reason
    }
}

/// A recursive-descent parser for old-style property-list text (strings, arrays, dictionaries, data).
struct OldStyleParser {
    /// Where and why the text does not parse.
    struct Failure: Error {
        var message: String
        /// The offset in characters from the start of the text.
        var offset: Int
    }

    private let characters: [Character]
    private var index = 0

    init(_ text: String) { characters = Array(text) }

    /// One value filling the whole text.
    mutating func document() throws(Failure) -> DefaultsValue {
        let value = try parseValue()
        try skipSpace()
        guard index == characters.count else { throw fail("unexpected '\(characters[index])' after the value") }
        return value
    }

    private func fail(_ message: String) -> Failure { Failure(message: message, offset: index) }

    private var current: Character? { index < characters.count ? characters[index] : nil }

    /// Skips white space and `//` or `/* */` comments.
    private mutating func skipSpace() throws(Failure) {
        while let character = current {
            if character.isWhitespace {
                index += 1
            } else if character == "/", index + 1 < characters.count, characters[index + 1] == "/" {
                while let next = current, !next.isNewline { index += 1 }
            } else if character == "/", index + 1 < characters.count, characters[index + 1] == "*" {
                let start = index
                index += 2
                while index + 1 < characters.count, !(characters[index] == "*" && characters[index + 1] == "/") {
                    index += 1
                }
                guard index + 1 < characters.count else { index = start; throw fail("unterminated comment") }
                index += 2
            } else {
                return
            }
        }
    }

    private mutating func parseValue() throws(Failure) -> DefaultsValue {
        try skipSpace()
        guard let character = current else { throw fail("expected a value, found the end of the text") }
        switch character {
        case "{": return try parseDictionary()
        case "(": return try parseArray()
        case "<": return try parseData()
        default: return .string(try parseString())
        }
    }

    private mutating func parseDictionary() throws(Failure) -> DefaultsValue {
        index += 1
        var entries: [String: DefaultsValue] = [:]
        while true {
            try skipSpace()
            guard let character = current else { throw fail("expected a key or '}', found the end of the text") }
            if character == "}" { index += 1; return .dictionary(entries) }
            let key = try parseString()
            try skipSpace()
            guard current == "=" else { throw fail("expected '=' after the key '\(key)'") }
            index += 1
            entries[key] = try parseValue()
            try skipSpace()
            if current == ";" {
                index += 1
            } else if current != "}" {
                throw fail("expected ';' after the value of '\(key)'")
            }
        }
    }

    private mutating func parseArray() throws(Failure) -> DefaultsValue {
        index += 1
        var items: [DefaultsValue] = []
        while true {
            try skipSpace()
            guard let character = current else { throw fail("expected a value or ')', found the end of the text") }
            if character == ")" { index += 1; return .array(items) }
            items.append(try parseValue())
            try skipSpace()
            if current == "," {
                index += 1
            } else if current != ")" {
                throw fail("expected ',' or ')' after an array item")
            }
        }
    }

    private mutating func parseData() throws(Failure) -> DefaultsValue {
        index += 1
        var nibbles: [UInt8] = []
        while let character = current, character != ">" {
            if let digit = character.hexDigitValue {
                nibbles.append(UInt8(digit))
            } else if !character.isWhitespace {
                throw fail("expected hexadecimal digits in <data>, found '\(character)'")
            }
            index += 1
        }
        guard current == ">" else { throw fail("expected '>' to end the data") }
        guard nibbles.count % 2 == 0 else { throw fail("odd number of hexadecimal digits in the data") }
        index += 1
        var bytes = Data(capacity: nibbles.count / 2)
        for pair in stride(from: 0, to: nibbles.count, by: 2) { bytes.append(nibbles[pair] << 4 | nibbles[pair + 1]) }
        return .data(bytes)
    }

    /// A quoted string with escapes, or an unquoted run of letters, digits and `_ $ + / : . -`.
    private mutating func parseString() throws(Failure) -> String {
        guard let first = current else { throw fail("expected a string") }
        if first == "\"" || first == "'" { return try parseQuoted(quote: first) }
        var text = ""
        while let character = current, Self.isUnquoted(character) {
            text.append(character)
            index += 1
        }
        guard !text.isEmpty else { throw fail("unexpected '\(first)' (quote strings that contain it)") }
        return text
    }

    private static func isUnquoted(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "_$+/:.-".contains(character))
    }

    private mutating func parseQuoted(quote: Character) throws(Failure) -> String {
        let start = index
        index += 1
        var text = ""
        while let character = current {
            index += 1
            if character == quote { return text }
            guard character == "\\" else { text.append(character); continue }
            guard let escaped = current else { break }
            index += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "U", "u":
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = current?.hexDigitValue else {
                        throw fail("expected four hexadecimal digits after \\\(escaped)")
                    }
                    value = value << 4 | UInt32(digit)
                    index += 1
                }
                guard let scalar = Unicode.Scalar(value) else { throw fail("\\\(escaped) names no character") }
                text.unicodeScalars.append(scalar)
            default: text.append(escaped)
            }
        }
        index = start
        throw fail("unterminated quoted string")
    }
}
