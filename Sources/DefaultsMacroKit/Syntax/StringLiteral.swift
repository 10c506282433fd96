/// Decodes the value of a string literal that holds no interpolation.
enum StringLiteral {
    /// The value of a plain string literal — single-line or multi-line, raw (`#"…"#`) or not, with escapes —
    /// as the compiler reads it; `nil` for a literal with interpolation or anything that is not a complete
    /// string literal. A multi-line literal loses its opening and closing line breaks and the indentation of
    /// its closing delimiter, and an escaped line break (`\` at the end of a line) joins two lines.
    static func value(of text: String) -> String? {
        var hashes = 0
        var body = Substring(text)
        while body.first == "#" && body.last == "#" && body.count >= 2 {
            body = body.dropFirst().dropLast()
            hashes += 1
        }
        // `"""` opens a multi-line literal only when a line break follows (`#""""#` is the raw literal `""`).
        let multiLine =
            body.hasPrefix("\"\"\"") && body.dropFirst(3).drop(while: isHorizontalSpace).first?.isNewline == true
        let quotes = multiLine ? 3 : 1
        guard body.count >= 2 * quotes, body.hasPrefix(String(repeating: "\"", count: quotes)),
            body.hasSuffix(String(repeating: "\"", count: quotes))
        else { return nil }
        body = body.dropFirst(quotes).dropLast(quotes)
        if multiLine {
            guard let lines = multiLineContent(body) else { return nil }
            body = Substring(lines)
        } else if body.contains(where: \.isNewline) {
            return nil
        }
        return decodeEscapes(body, hashes: hashes, multiLine: multiLine)
    }

    /// The text between a multi-line literal's delimiters without its first and last line breaks and with
    /// the closing delimiter's indentation removed from every line; `nil` when the text is not laid out as a
    /// multi-line literal must be.
    private static func multiLineContent(_ body: Substring) -> String? {
        // Line breaks as the compiler reads them: `\r\n` and `\r` are `\n`.
        let normalized = body.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
        var lines = normalized.split(separator: "\n", omittingEmptySubsequences: false)
        // The opening delimiter ends its line; the closing one stands on a line of its own after the indentation.
        guard lines.count >= 2, lines[0].allSatisfy(isHorizontalSpace), let indentation = lines.last,
            indentation.allSatisfy(isHorizontalSpace)
        else { return nil }
        lines.removeFirst()
        lines.removeLast()
        var content: [Substring] = []
        for line in lines {
            if line.hasPrefix(indentation) {
                content.append(line.dropFirst(indentation.count))
            } else if line.allSatisfy(isHorizontalSpace) {
                content.append("")  // a blank line may be less indented
            } else {
                return nil  // insufficient indentation: the compiler rejects it
            }
        }
        return content.joined(separator: "\n")
    }

    private static func isHorizontalSpace(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// `body` with its escapes (`\n`, `\u{…}`, … behind `\` and `hashes` `#`) replaced by what they stand for;
    /// `nil` for an interpolation or an unknown escape.
    private static func decodeEscapes(_ body: Substring, hashes: Int, multiLine: Bool) -> String? {
        let escape = "\\" + String(repeating: "#", count: hashes)
        // Text that would close the literal: the text is not one literal (`"a" + "b"`).
        let closing = (multiLine ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes)
        var result = ""
        var rest = body
        while let range = rest.firstRange(of: escape) {
            let text = rest[rest.startIndex..<range.lowerBound]
            guard !text.contains(closing) else { return nil }
            result += text
            rest = rest[range.upperBound...]
            // An escaped line break before a multi-line literal's closing delimiter (already removed).
            guard let next = rest.first else { return multiLine ? result : nil }
            rest = rest.dropFirst()
            switch next {
            case "n": result += "\n"
            case "t": result += "\t"
            case "r": result += "\r"
            case "0": result += "\0"
            case "\\": result += "\\"
            case "\"": result += "\""
            case "'": result += "'"
            case "u":
                guard rest.first == "{", let close = rest.firstIndex(of: "}") else { return nil }
                let digits = rest[rest.index(after: rest.startIndex)..<close]
                guard (1...8).contains(digits.count), let scalar = UInt32(digits, radix: 16),
                    let unicode = Unicode.Scalar(scalar)
                else { return nil }
                result.unicodeScalars.append(unicode)
                rest = rest[rest.index(after: close)...]
            case " ", "\t", "\n":
                // An escaped line break (spaces may follow the `\`): the line goes on without a break. At the
                // end, it is the line break before the closing delimiter.
                guard multiLine else { return nil }
                let afterSpaces = next == "\n" ? rest : rest.drop(while: isHorizontalSpace)
                if next == "\n" || afterSpaces.isEmpty {
                    rest = afterSpaces
                } else if afterSpaces.first == "\n" {
                    rest = afterSpaces.dropFirst()
                } else {
                    return nil
                }
            default:
                return nil  // `\(` interpolation or an unknown escape
            }
        }
        guard !rest.contains(closing) else { return nil }
        result += rest
        return result
    }

    /// Swift source for a string literal holding `value`.
    static func quote(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
