import Foundation

/// The members of a suite document for the incremental re-read (see ``PropertyListXMLSuiteIndex``):
/// delimited without building values, and read one at a time.
extension PropertyListXMLReader {
    /// The key of the `<key>` element at `range` (with its tags), or `nil` when it is not a plain `<key>`
    /// element that reads.
    static func key(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> String? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        guard reader.consume("<key>"), let key = reader.parseText(closing: "</key>", element: "key"),
            reader.index == range.upperBound, reader.failure == nil
        else { return nil }
        return key
    }

    /// The key of the `<key>` element (in any form) that starts at `offset`, or `nil` when it does not read.
    static func key(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> String? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = offset + 4  // "<key"
        guard let isEmpty = reader.finishOpenTag("key") else { return nil }
        if isEmpty { return "" }
        return reader.parseText(closing: "</key>", element: "key")
    }

    /// The value of the element at `range`, read as a value of the top-level dictionary; `nil` when it is
    /// an error (a full parse then reports it).
    static func memberValue(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> DefaultsValue? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = range.lowerBound
        guard let value = reader.parseValue(depth: 2, in: .array), reader.index == range.upperBound,
            reader.failure == nil
        else {
            return nil
        }
        return value
    }

    /// The members of a suite document: each `<key>` element of the top-level dictionary and the value
    /// element after it, delimited, not read (one whose bytes are not those of a member read before is
    /// read with ``memberValue(in:at:)``). Whitespace only: none. `nil` when the document is not one this
    /// reader reads, with a dictionary at the top.
    ///
    /// With `end`, the scan stops at a member where a previous member starts in the bytes the previous
    /// version ends with (see ``SuiteIndex/CommonEnd``); `sameAtEnd` is how many members it took from there.
    static func scanSuiteMembers(
        _ bytes: UnsafeBufferPointer<UInt8>, end: SuiteIndex.CommonEnd? = nil
    ) -> (members: [SuiteIndex.Member], sameAtEnd: Int)? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.skipWhitespace()
        if reader.index == bytes.count { return ([], 0) }
        // The scan reads the file's own bytes (a full parse drops the byte-order mark before it starts).
        if reader.index == 0, reader.startsWith("\u{FEFF}") { reader.index = 3 }
        let scan = reader.parseDocument { reader -> (members: [SuiteIndex.Member], sameAtEnd: Int)? in
            if reader.consume("<dict/>") { return ([], 0) }
            guard reader.consume("<dict>") else { return nil }
            var members: [SuiteIndex.Member] = []
            guard let taken = reader.scanMembers(into: &members, end: end) else { return nil }
            reader.restWasRead = taken > 0
            return (members, taken)
        }
        return reader.failure == nil ? scan : nil
    }

    /// The layout of a suite document for ``PropertyListXMLSuiteEditor``: its members in any form the
    /// reader reads (comments, processing instructions and CDATA anywhere, attributes, `<key/>`), and the
    /// top-level dictionary's tags. Unlike ``scanSuiteMembers(_:end:)`` every member is parsed, so the
    /// document is known to read. `nil` when it does not, or its top-level value is not a dictionary.
    static func scanEditableSuite(_ bytes: UnsafeBufferPointer<UInt8>) -> PropertyListXMLSuiteEditor.Layout? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.skipWhitespace()
        if reader.index == 0, reader.startsWith("\u{FEFF}") { reader.index = 3 }
        let layout = reader.parseDocument { reader -> PropertyListXMLSuiteEditor.Layout? in
            let openStart = reader.index
            guard reader.startsWith("<dict"), reader.index + 5 < bytes.count,
                bytes[reader.index + 5] == UInt8(ascii: ">") || bytes[reader.index + 5] == UInt8(ascii: "/")
                    || reader.isWhitespace(bytes[reader.index + 5])
            else { return nil }
            reader.index += 5
            guard let isEmpty = reader.finishOpenTag("dict") else { return nil }
            let open = openStart..<reader.index
            if isEmpty { return PropertyListXMLSuiteEditor.Layout(members: [], open: open, close: nil) }
            var members: [SuiteIndex.Member] = []
            while true {
                reader.skipMisc()
                if reader.startsTag(with: UInt8(ascii: "/")) {
                    let closeStart = reader.index
                    guard reader.expectClose("</dict>", after: "") else { return nil }
                    return PropertyListXMLSuiteEditor.Layout(
                        members: members, open: open, close: closeStart..<reader.index)
                }
                let keyStart = reader.index
                guard reader.startsWith("<key"), reader.index + 4 < bytes.count else { return nil }
                reader.index += 4
                guard let isEmptyKey = reader.finishOpenTag("key") else { return nil }
                if !isEmptyKey, reader.parseText(closing: "</key>", element: "key") == nil { return nil }
                let key = keyStart..<reader.index
                reader.skipMisc()
                let valueStart = reader.index
                guard reader.parseValue(depth: 2, in: .array) != nil else { return nil }
                members.append(SuiteIndex.Member(key: key, value: valueStart..<reader.index))
            }
        }
        return reader.failure == nil ? layout : nil
    }

    /// Scans the members of the top-level dictionary from `start` (just after a member) to the end of the
    /// document; see ``SuiteIndex/scan(_:previous:previousMembers:scanAll:scanRest:)``. Returns how many
    /// members were taken from the common end, or `nil`.
    static func scanSuiteMembers(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into members: inout [SuiteIndex.Member],
        end: SuiteIndex.CommonEnd
    ) -> Int? {
        var reader = PropertyListXMLReader(bytes: bytes, fileURL: nil)
        reader.index = start
        guard let taken = reader.scanMembers(into: &members, end: end) else { return nil }
        // Members taken from the common end are followed by the previous file's end, which was read.
        if taken > 0 { return taken }
        reader.skipWhitespace()
        guard reader.consume("</plist>") else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? 0 : nil
    }

    /// Members up to and including `</dict>`; with `end`, a member where a previous one starts in the
    /// common end begins the previous file's last members (see ``SuiteIndex/CommonEnd``).
    private mutating func scanMembers(into members: inout [SuiteIndex.Member], end: SuiteIndex.CommonEnd?) -> Int? {
        while true {
            skipWhitespace()
            if consume("</dict>") { return 0 }
            if let end, let taken = end.appendMembers(startingAt: index, to: &members) { return taken }
            let keyStart = index
            guard consume("<key>") else { return nil }
            while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
            guard consume("</key>") else { return nil }
            let key = keyStart..<index
            skipWhitespace()
            let valueStart = index
            guard skipElement() else { return nil }
            members.append(SuiteIndex.Member(key: key, value: valueStart..<index))
        }
    }

    /// Moves past the element starting at `index` and everything inside it (text is skipped, nested
    /// elements counted); `false` at a comment, CDATA section, processing instruction or the end.
    private mutating func skipElement() -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { return false }
        var depth = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return false }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { return false }
            var close = index + 1
            while close < bytes.count, bytes[close] != UInt8(ascii: ">") { close += 1 }
            guard close < bytes.count else { return false }
            if next == UInt8(ascii: "/") {
                depth -= 1
            } else if bytes[close - 1] != UInt8(ascii: "/") {
                depth += 1
            }
            index = close + 1
            if depth <= 0 { return depth == 0 }
        }
        return false
    }
}
