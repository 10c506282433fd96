/// Decodes the value of a simple string literal.
enum StringLiteral {
    /// The value of a single-line literal with escapes but no interpolation; `nil` otherwise.
    static func value(of text: String) -> String? {
        var hashes = 0
        var body = Substring(text)
        while body.first == "#" && body.last == "#" && body.count >= 2 {
            body = body.dropFirst().dropLast()
            hashes += 1
        }
        guard body.count >= 2, body.first == "\"", body.last == "\"", !body.hasPrefix("\"\"\"") else { return nil }
        body = body.dropFirst().dropLast()
        let escape = "\\" + String(repeating: "#", count: hashes)
        var result = ""
        var rest = body
        while let range = rest.firstRange(of: escape) {
            result += rest[rest.startIndex..<range.lowerBound]
            rest = rest[range.upperBound...]
            guard let next = rest.first else { return nil }
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
                guard rest.first == "{", let close = rest.firstIndex(of: "}"),
                      let scalar = UInt32(rest[rest.index(after: rest.startIndex)..<close], radix: 16),
                      let unicode = Unicode.Scalar(scalar) else { return nil }
                result.unicodeScalars.append(unicode)
                rest = rest[rest.index(after: close)...]
            default:
                return nil  // `\(` interpolation or an unknown escape
            }
        }
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
