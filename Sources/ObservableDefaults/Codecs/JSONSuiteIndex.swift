import Foundation

/// Where the members of a JSON suite file are, for the re-read that parses only the members whose bytes
/// changed (see ``SuiteIndex``): the JSON scanner, and the JSON reading of one member.
enum JSONSuiteIndex {
    /// One top-level member: its key with the quotes, and its value.
    typealias Member = SuiteIndex.Member
    typealias Scan = SuiteIndex.Scan

    // MARK: Scanning

    /// The members of a suite file in order, or `nil` when anything is unexpected (a full parse then finds
    /// the error). Whitespace and comments only is an empty suite; comments and a trailing comma may stand
    /// where the reader accepts them (see ``JSONReader``). Values are delimited, not checked: one whose bytes
    /// are not those of a member already parsed is parsed before it is used.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        scan(bytes, end: nil)?.members
    }

    /// ``scan(_:)``, ending early at a member where a previous member starts in the bytes the previous
    /// version ends with (see ``SuiteIndex/CommonEnd``); `sameAtEnd` is how many members it took from there.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, end: SuiteIndex.CommonEnd?) -> (
        members: [Member], sameAtEnd: Int
    )? {
        var index = 0
        let count = bytes.count
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace(bytes, &index)
        guard index < count else { return ([], 0) }
        guard bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipWhitespace(bytes, &index)
        var members: [Member] = []
        if index < count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            skipWhitespace(bytes, &index)
            return index == count ? (members, 0) : nil
        }
        guard let member = scanMember(bytes, &index) else { return nil }
        members.append(member)
        guard let taken = scanRest(bytes, from: index, into: &members, end: end) else { return nil }
        return (members, taken)
    }

    /// The members of bytes ``JSONWriter`` wrote, from its entries' fragments (`  "key": value` each, in
    /// order): only the keys are scanned. `nil` when an entry has no fragment or the layout is not that.
    static func members(ofWritten bytes: UnsafeBufferPointer<UInt8>, entries: [SuiteFormat.Entry]) -> [Member]? {
        var members: [Member] = []
        members.reserveCapacity(entries.count)
        for entry in entries {
            guard let fragment = entry.fragment, fragment.upperBound <= bytes.count,
                fragment.count >= 6, bytes[fragment.lowerBound + 2] == UInt8(ascii: "\"")
            else { return nil }
            var index = fragment.lowerBound + 2
            guard skipString(bytes, &index), index + 2 < fragment.upperBound,
                bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: " ")
            else { return nil }
            members.append(Member(key: fragment.lowerBound + 2..<index, value: index + 2..<fragment.upperBound))
        }
        return members
    }

    /// ``scan(_:)`` of `bytes`, given the previous file and its members (which ``scan(_:)`` found): only
    /// the members between the bytes both files start and end with are scanned (see ``SuiteIndex/Scan``).
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, previous: UnsafeBufferPointer<UInt8>, previousMembers: [Member]
    ) -> Scan? {
        SuiteIndex.scan(bytes, previous: previous, previousMembers: previousMembers, scanAll: { scan($0, end: $1) }) {
            start, members, end in
            scanRest(bytes, from: start, into: &members, end: end)
        }
    }

    /// Scans from just after a member's value to the end of the file. With `end`, a member starting in
    /// the common end where a previous member starts begins it: it and the rest are the previous members,
    /// moved. Returns how many members were taken that way.
    private static func scanRest(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into members: inout [Member], end: SuiteIndex.CommonEnd?
    ) -> Int? {
        var index = start
        let count = bytes.count
        while true {
            skipWhitespace(bytes, &index)
            guard index < count else { return nil }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                skipWhitespace(bytes, &index)
                return index == count ? 0 : nil
            }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
            skipWhitespace(bytes, &index)
            // A trailing comma (a suite file may have one).
            if index < count, bytes[index] == UInt8(ascii: "}") { continue }
            if let end, let taken = end.appendMembers(startingAt: index, to: &members) { return taken }
            guard let member = scanMember(bytes, &index) else { return nil }
            members.append(member)
        }
    }

    /// `"key": value` at `index`, which it moves past.
    static func scanMember(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Member? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let keyStart = index
        guard skipString(bytes, &index) else { return nil }
        let key = keyStart..<index
        skipWhitespace(bytes, &index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        skipWhitespace(bytes, &index)
        let valueStart = index
        guard skipValue(bytes, &index) else { return nil }
        return Member(key: key, value: valueStart..<index)
    }

    /// Moves past whitespace and comments (see ``JSONComments``); an unterminated comment stops at its
    /// `/`, which no caller accepts, so the scan fails there.
    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        _ = JSONComments.skipTrivia(bytes, &index)
    }

    /// Moves past a string starting at its opening quote; `false` when it does not end.
    private static func skipString(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return false
    }

    /// Moves past a value: a string, a bracketed container (strings inside skipped), or a run of the
    /// characters numbers and literals are made of.
    private static func skipValue(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return skipString(bytes, &index)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString(bytes, &index) else { return false }
                    continue
                case UInt8(ascii: "/"):
                    // A comment inside a container may hold brackets and quotes.
                    switch JSONComments.skip(bytes, &index) {
                    case .some(true): continue
                    case .some(false): break
                    case nil: return false
                    }
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default: break
                }
                index += 1
            }
            return false
        default:
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                    index += 1
                default:
                    return index > start
                }
            }
            return index > start
        }
    }

    // MARK: Re-reading

    /// ``SuiteIndex/reread(previousBytes:previousMembers:values:newBytes:newMembers:sameAtStart:sameAtEnd:key:value:removed:)``
    /// with JSON's reader: also brings `spellings` (the number spellings of the previous bytes) to those of
    /// the new bytes (on failure they may be partly changed; the full parse then replaces them all).
    static func reread(
        previousBytes: UnsafeBufferPointer<UInt8>, previousMembers: [Member],
        values: inout [ExactKey: DefaultsValue], spellings: inout JSONNumberSpellings,
        newBytes: UnsafeBufferPointer<UInt8>, newMembers: [Member], sameAtStart: Int = 0, sameAtEnd: Int = 0
    ) -> [ExactKey]? {
        SuiteIndex.reread(
            previousBytes: previousBytes, previousMembers: previousMembers, values: &values,
            newBytes: newBytes, newMembers: newMembers, sameAtStart: sameAtStart, sameAtEnd: sameAtEnd,
            key: { bytes, range in JSONReader.string(in: bytes, at: range) },
            value: { bytes, range, key in JSONReader.memberValue(in: bytes, at: range, key: key, spellings: &spellings)
            },
            removed: { key in spellings.set(nil, forKey: key) })
    }
}
