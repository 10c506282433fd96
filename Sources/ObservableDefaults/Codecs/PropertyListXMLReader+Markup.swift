import Foundation

/// The markup around values: the XML declaration, DOCTYPE, comments, processing instructions, tags with
/// attributes, closing tags, and the text of `<string>` and `<key>` (references and CDATA sections).
extension PropertyListXMLReader {
    // MARK: - Prolog and what stands between elements

    /// `<?xml version="1.0" encoding="UTF-8"?>`; the encoding must be the file's (see ``XMLTextEncoding``).
    mutating func parseDeclaration() -> Bool {
        index += 5
        while true {
            let hadSpace = index < bytes.count && isWhitespace(bytes[index])
            skipWhitespace()
            if consume("?>") { return true }
            guard hadSpace, index < bytes.count, isAttributeNameStart(bytes[index]) else {
                return fail(
                    "expected '?>' to end the XML declaration, or a pseudo-attribute (version, encoding, standalone) after a space, found \(found())",
                    at: index) ?? false
            }
            guard let attribute = parseAttribute(in: "?xml") else { return false }
            if matches(attribute.name, "encoding") {
                guard checkEncoding(named: attribute.value) else { return false }
            }
        }
    }

    /// Whether the declared encoding is the one the bytes are in: UTF-8 (or ASCII, a subset), or UTF-16
    /// when the file started with a UTF-16 byte-order mark.
    private mutating func checkEncoding(named range: Range<Int>) -> Bool {
        let declared = text(range)
        let name = declared.lowercased()
        if wasUTF16 {
            if ["utf-16", "utf-16le", "utf-16be", "utf16"].contains(name) { return true }
            return fail(
                "the XML declaration names the encoding '\(declared)', but the file is UTF-16 (it starts with a UTF-16 byte-order mark): declare encoding=\"UTF-16\"",
                at: range.lowerBound) ?? false
        }
        if ["utf-8", "utf8", "us-ascii", "ascii"].contains(name) { return true }
        if name.hasPrefix("utf-16") || name == "utf16" {
            return fail(
                "the XML declaration names the encoding '\(declared)', but the file has no UTF-16 byte-order mark and reads as UTF-8: save it as UTF-8, or as UTF-16 with a byte-order mark",
                at: range.lowerBound) ?? false
        }
        return fail(
            "the encoding '\(declared)' is not supported: expected UTF-8 (or UTF-16 with a byte-order mark); save the file as UTF-8",
            at: range.lowerBound) ?? false
    }

    /// `<!DOCTYPE …>` with its quoted identifiers. An internal subset (`[…]`) is an error: it could
    /// declare entities, which would change what the text means.
    mutating func skipDoctype() -> Bool {
        let start = index
        index += 9
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let quote = bytes[index]
                index += 1
                while index < bytes.count, bytes[index] != quote { index += 1 }
                index = min(index + 1, bytes.count)
            case UInt8(ascii: "["):
                return fail(
                    "a DOCTYPE with an internal subset ('[…]') is not supported: it could declare entities; remove the '[…]' part",
                    at: index) ?? false
            case UInt8(ascii: ">"):
                index += 1
                return true
            default:
                index += 1
            }
        }
        return fail("unterminated <!DOCTYPE: expected '>', found end of file", at: start) ?? false
    }

    /// Whitespace, comments and processing instructions, as many as stand at `index`.
    @inline(__always)
    mutating func skipMisc() {
        while true {
            skipWhitespace()
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "<") else { return }
            if bytes[index + 1] == UInt8(ascii: "!"), startsWith("<!--") {
                guard skipComment() else { return }
            } else if bytes[index + 1] == UInt8(ascii: "?") {
                guard skipProcessingInstruction() else { return }
            } else {
                return
            }
        }
    }

    /// `<!-- … -->`.
    mutating func skipComment() -> Bool {
        let start = index
        index += 4
        guard let end = position(of: "-->") else {
            index = bytes.count
            return fail("unterminated comment: expected '-->', found end of file", at: start) ?? false
        }
        index = end + 3
        return true
    }

    /// `<?target … ?>`; an XML declaration anywhere but at the start is an error.
    mutating func skipProcessingInstruction() -> Bool {
        let start = index
        if startsWith("<?xml"), index + 5 < bytes.count,
            bytes[index + 5] == UInt8(ascii: "?") || isWhitespace(bytes[index + 5])
        {
            return fail("an XML declaration ('<?xml … ?>') may stand only at the start of the file", at: start) ?? false
        }
        index += 2
        guard let end = position(of: "?>") else {
            index = bytes.count
            return fail("unterminated processing instruction: expected '?>', found end of file", at: start) ?? false
        }
        index = end + 2
        return true
    }

    // MARK: - Tags

    /// After an element's name: its attributes (read and ignored), then `>` or `/>`. Whether the element
    /// is empty (`/>`), or `nil` after recording an error.
    mutating func finishOpenTag(_ name: String) -> Bool? {
        while true {
            let hadSpace = index < bytes.count && isWhitespace(bytes[index])
            skipWhitespace()
            if consume(">") { return false }
            if consume("/>") { return true }
            guard hadSpace, index < bytes.count, isAttributeNameStart(bytes[index]) else {
                return fail(
                    "expected '>' or '/>' to end the <\(name)> tag (or an attribute after a space), found \(found())",
                    at: index)
            }
            guard parseAttribute(in: name) != nil else { return nil }
        }
    }

    /// `name="value"` (or with single quotes); the ranges of the name and the value's text.
    private mutating func parseAttribute(in element: String) -> (name: Range<Int>, value: Range<Int>)? {
        let nameStart = index
        while index < bytes.count, isAttributeNameByte(bytes[index]) { index += 1 }
        let name = nameStart..<index
        skipWhitespace()
        guard consume("=") else {
            return fail(
                "expected '=' after the attribute name '\(text(name))' in the <\(element)> tag, found \(found())",
                at: index)
        }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            return fail("expected a quoted value for the attribute '\(text(name))', found \(found())", at: index)
        }
        let quote = bytes[index]
        let open = index
        index += 1
        let valueStart = index
        while index < bytes.count, bytes[index] != quote {
            if bytes[index] == UInt8(ascii: "<") {
                return fail("'<' in the value of the attribute '\(text(name))': write '&lt;'", at: index)
            }
            index += 1
        }
        guard index < bytes.count else {
            return fail(
                "unterminated value of the attribute '\(text(name))': expected \(quote == UInt8(ascii: "'") ? "\"'\"" : "'\"'"), found end of file",
                at: open)
        }
        index += 1
        return (name, valueStart..<index - 1)
    }

    /// The closing tag `literal` (`</name>`), also with spaces before its `>`; `false` after recording an
    /// error that says what else was expected (`expectation`).
    mutating func expectClose(_ literal: StaticString, after expectation: @autoclosure () -> String) -> Bool {
        if consume(literal) { return true }
        let nameLength = literal.utf8CodeUnitCount - 1
        let namesIt = literal.withUTF8Buffer { expected in
            index + nameLength <= bytes.count
                && (0..<nameLength).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if namesIt {
            var end = index + nameLength
            if end < bytes.count, isWhitespace(bytes[end]) {
                while end < bytes.count, isWhitespace(bytes[end]) { end += 1 }
                if end < bytes.count, bytes[end] == UInt8(ascii: ">") {
                    index = end + 1
                    return true
                }
            }
        }
        return fail("expected '\(literal)' \(expectation()), found \(found())", at: index) ?? false
    }

    // MARK: - Text

    /// The text of a `<string>` or `<key>` up to `closing`: predefined entities and character references
    /// replaced, CDATA sections taken as they are, comments and processing instructions left out. Carriage
    /// returns and other control characters are kept as written, as Foundation keeps them (a suite refuses
    /// to store a character XML does not allow: ``SuiteFormat/firstCharacterXMLRejects(in:)``).
    mutating func parseText(closing: StaticString, element: String) -> String? {
        let start = index
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                guard startsWith(closing) else { break }
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let end = index
                index += closing.utf8CodeUnitCount
                return makeString(text, isASCII: highBits < 0x80, written: start..<end)
            }
            if byte == UInt8(ascii: "&") { break }
            highBits |= byte
            index += 1
        }
        // Slow path: references, CDATA sections, comments, a closing tag with spaces, or an error.
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "<"):
                let end = index
                if startsWith("<![CDATA[") {
                    guard appendCDATA(to: &decoded) else { return nil }
                } else if startsWith("<!--") {
                    guard skipComment() else { return nil }
                } else if startsWith("<?") {
                    guard skipProcessingInstruction() else { return nil }
                } else if startsWith("</") {
                    guard expectClose(closing, after: "to close the <\(element)>") else { return nil }
                    return decoded.withUnsafeBufferPointer { makeString($0, isASCII: false, written: start..<end) }
                } else {
                    return fail(
                        "expected text or '\(closing)' in a <\(element)>, found \(found()) (write '&lt;' for a '<' in text)",
                        at: index)
                }
            case UInt8(ascii: "&"):
                guard let scalar = parseReference() else { return nil }
                decoded.append(contentsOf: UTF8.encode(scalar)!)
            default:
                decoded.append(byte)
                index += 1
            }
        }
        return fail("unterminated <\(element)>: expected '\(closing)', found end of file", at: start)
    }

    /// `<![CDATA[ … ]]>`, its text appended as written.
    private mutating func appendCDATA(to decoded: inout [UInt8]) -> Bool {
        let start = index
        index += 9
        guard let end = position(of: "]]>") else {
            index = bytes.count
            return fail("unterminated CDATA section: expected ']]>', found end of file", at: start) ?? false
        }
        decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
        index = end + 3
        return true
    }

    /// The string of `text`, or an error at the first byte of `written` (the element's text in the file)
    /// that is not UTF-8.
    private mutating func makeString(
        _ text: UnsafeBufferPointer<UInt8>, isASCII: Bool, written: Range<Int>
    ) -> String? {
        if isASCII { return String(decoding: text, as: UTF8.self) }
        if let string = String(validating: text, as: UTF8.self) { return string }
        var parser = Unicode.UTF8.ForwardParser()
        var bytesLeft = UnsafeBufferPointer(rebasing: bytes[written]).makeIterator()
        var offset = written.lowerBound
        while case .valid(let scalar) = parser.parseScalar(from: &bytesLeft) { offset += scalar.count }
        return fail(
            "the text is not valid UTF-8 (byte 0x\(String(bytes[min(offset, bytes.count - 1)], radix: 16, uppercase: true)) here)",
            at: offset)
    }

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#NNN;` `&#xHHH;`. Anything else, and a character reference
    /// to a character XML 1.0 does not allow (NUL and other control characters, surrogates, U+FFFE, U+FFFF,
    /// beyond U+10FFFF), is an error.
    private mutating func parseReference() -> Unicode.Scalar? {
        let ampersand = index
        index += 1  // '&'
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
            if index - start > 40 || bytes[index] == UInt8(ascii: "<") || isWhitespace(bytes[index]) {
                return fail(
                    "'&' does not start an entity or character reference ended by ';': write '&amp;' for a '&' in text",
                    at: ampersand)
            }
            index += 1
        }
        guard index < bytes.count else {
            return fail(
                "'&' does not start an entity or character reference ended by ';': write '&amp;' for a '&' in text",
                at: ampersand)
        }
        let name = start..<index
        index += 1  // ';'
        if matches(name, "lt") { return "<" }
        if matches(name, "gt") { return ">" }
        if matches(name, "amp") { return "&" }
        if matches(name, "quot") { return "\"" }
        if matches(name, "apos") { return "'" }
        let reference = "&\(text(name));"
        guard !name.isEmpty, bytes[name.lowerBound] == UInt8(ascii: "#") else {
            return fail(
                "unknown entity '\(reference)': expected &lt; &gt; &amp; &quot; &apos; or a character reference such as &#233; or &#xE9;",
                at: ampersand)
        }
        var digits = name.dropFirst()
        var radix: UInt32 = 10
        if !digits.isEmpty, bytes[digits.lowerBound] == UInt8(ascii: "x") {
            radix = 16
            digits = digits.dropFirst()
        }
        var value: UInt32 = 0
        for position in digits {
            guard let digit = digitValue(bytes[position], radix: radix) else {
                return fail(
                    "'\(reference)' is not a character reference: expected decimal digits after '&#' or hexadecimal digits after '&#x'",
                    at: ampersand)
            }
            // Saturates instead of overflowing: anything above U+10FFFF is rejected below.
            value = min(value, 0x11_0000) * radix + digit
        }
        guard !digits.isEmpty else {
            return fail(
                "'\(reference)' is not a character reference: expected decimal digits after '&#' or hexadecimal digits after '&#x'",
                at: ampersand)
        }
        guard Self.isXMLCharacter(value), let scalar = Unicode.Scalar(value) else {
            return fail(
                "character reference '\(reference)' is not a character XML allows (expected U+9, U+A, U+D, U+20–U+D7FF, U+E000–U+FFFD or U+10000–U+10FFFF)",
                at: ampersand)
        }
        return scalar
    }

    // MARK: - Describing what is there

    /// Describes what is at `offset` (default: `index`) for an error: `end of file`, a tag, a quoted word
    /// or character, or `U+XXXX` for a control character.
    func found(at offset: Int? = nil) -> String {
        let at = offset ?? index
        guard at < bytes.count else { return "end of file" }
        let byte = bytes[at]
        if byte == UInt8(ascii: "<") {
            var end = at + 1
            while end < bytes.count, end - at < 30, bytes[end] != UInt8(ascii: ">"), bytes[end] != UInt8(ascii: "<"),
                bytes[end] != UInt8(ascii: "\n")
            {
                end += 1
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: ">") { return "'\(text(at..<end + 1))'" }
            return "'\(text(at..<end))…'"
        }
        if byte < 0x20 || byte == 0x7F {
            return "U+" + String(byte, radix: 16, uppercase: true).leftPadded(to: 4)
        }
        if isWordByte(byte) {
            var end = at
            while end < bytes.count, end - at < 24, isWordByte(bytes[end]) { end += 1 }
            return "'\(text(at..<end))'"
        }
        if byte < 0x80 { return "'" + String(UnicodeScalar(byte)) + "'" }
        var end = at + 1
        while end < bytes.count, end - at < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "'\(text(at..<end))'"
    }

    /// The bytes at `range` as text (invalid UTF-8 shown as U+FFFD).
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        isNameByte(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
    }

    private func isAttributeNameStart(_ byte: UInt8) -> Bool {
        isNameByte(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    private func isAttributeNameByte(_ byte: UInt8) -> Bool {
        isAttributeNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}
