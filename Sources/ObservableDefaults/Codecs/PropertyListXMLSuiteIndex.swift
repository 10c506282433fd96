import Foundation

/// Where the members of an XML property-list suite file are, for the re-read that parses only the members
/// whose bytes changed (see ``SuiteIndex``): a member is a `<key>` element of the top-level dictionary and
/// the value element after it, delimited by ``PropertyListXMLReader`` without building values.
///
/// Documents in the plain layout take this path; anything else (comments or CDATA between or in members,
/// UTF-16, a byte-order mark, an error) makes the scan or a member's parse fail, and the caller parses the
/// whole file.
enum PropertyListXMLSuiteIndex {
    typealias Member = SuiteIndex.Member

    /// The members of a suite file in order (whitespace only: none), or `nil` when it is not an XML
    /// property list with a dictionary at the top in the layout the reader handles.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        PropertyListXMLReader.scanSuiteMembers(bytes)?.members
    }

    /// ``scan(_:)`` of `bytes`, given the previous file and its members: only the members between the
    /// bytes both files start and end with are scanned (see ``SuiteIndex/Scan``).
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, previous: UnsafeBufferPointer<UInt8>, previousMembers: [Member]
    ) -> SuiteIndex.Scan? {
        SuiteIndex.scan(
            bytes, previous: previous, previousMembers: previousMembers,
            scanAll: { bytes, end in
                PropertyListXMLReader.scanSuiteMembers(bytes, end: end)
            }
        ) { start, members, end in
            PropertyListXMLReader.scanSuiteMembers(bytes, from: start, into: &members, end: end)
        }
    }

    /// The members of bytes ``PropertyListWriter`` wrote, from its entries' fragments (`\t<key>…</key>\n`,
    /// then `\t` + the value element + `\n`, each): only the keys are scanned. `nil` when an entry has no
    /// fragment or the layout is not that.
    static func members(ofWritten bytes: UnsafeBufferPointer<UInt8>, entries: [SuiteFormat.Entry]) -> [Member]? {
        var members: [Member] = []
        members.reserveCapacity(entries.count)
        let keyOpen = Array("\t<key>".utf8), keyClose = Array("</key>\n\t".utf8)
        for entry in entries {
            guard let fragment = entry.fragment, fragment.upperBound <= bytes.count,
                fragment.count > keyOpen.count + keyClose.count + 1,
                starts(bytes, at: fragment.lowerBound, with: keyOpen),
                bytes[fragment.upperBound - 1] == UInt8(ascii: "\n")
            else { return nil }
            // Key text holds no `<` (the writer escapes it).
            var index = fragment.lowerBound + keyOpen.count
            while index < fragment.upperBound, bytes[index] != UInt8(ascii: "<") { index += 1 }
            guard starts(bytes, at: index, with: keyClose), index + keyClose.count < fragment.upperBound - 1 else {
                return nil
            }
            let keyEnd = index + keyClose.count - 2
            members.append(Member(key: fragment.lowerBound + 1..<keyEnd, value: keyEnd + 2..<fragment.upperBound - 1))
        }
        return members
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, with literal: [UInt8]) -> Bool {
        guard index >= 0, index + literal.count <= bytes.count else { return false }
        for offset in literal.indices where bytes[index + offset] != literal[offset] { return false }
        return true
    }

    /// ``SuiteIndex/reread(previousBytes:previousMembers:values:newBytes:newMembers:sameAtStart:sameAtEnd:key:value:removed:)``
    /// with the XML property-list reader.
    static func reread(
        previousBytes: UnsafeBufferPointer<UInt8>, previousMembers: [Member], values: inout [ExactKey: DefaultsValue],
        newBytes: UnsafeBufferPointer<UInt8>, newMembers: [Member], sameAtStart: Int = 0, sameAtEnd: Int = 0
    ) -> [ExactKey]? {
        SuiteIndex.reread(
            previousBytes: previousBytes, previousMembers: previousMembers, values: &values,
            newBytes: newBytes, newMembers: newMembers, sameAtStart: sameAtStart, sameAtEnd: sameAtEnd,
            key: { bytes, range in PropertyListXMLReader.key(in: bytes, at: range) },
            value: { bytes, range, _ in PropertyListXMLReader.memberValue(in: bytes, at: range).map { .some($0) } })
    }
}
