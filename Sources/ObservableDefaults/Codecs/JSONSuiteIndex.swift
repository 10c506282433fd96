import Foundation

/// Where the members of a JSON suite file are, and the re-read that parses only the members whose bytes
/// changed.
///
/// A re-read after an outside change usually finds one member changed among many. Instead of parsing the
/// whole file and comparing every key, ``scan(_:)`` finds each top-level member's key and value byte ranges
/// (no values built, no strings made), and ``reread(previousBytes:previousMembers:values:spellings:newBytes:newMembers:sameAtStart:sameAtEnd:)``
/// compares them with the members of the bytes last read or written: a member whose key and value bytes
/// are equal is unchanged and costs a `memcmp`; only the others are parsed, by ``JSONReader``.
///
/// The result is exactly that of a full parse and a diff, or `nil`, and the caller parses the whole file
/// (which also produces the error, with its line and column, for a file that does not parse).
enum JSONSuiteIndex {
    /// One top-level member: its key with the quotes, and its value.
    struct Member: Equatable {
        var key: Range<Int>
        var value: Range<Int>
    }

    // MARK: Scanning

    /// The members of a suite file in order, or `nil` when anything is unexpected (a full parse then finds
    /// the error). Whitespace only is an empty suite. Values are delimited, not checked: one whose bytes
    /// are not those of a member already parsed is parsed before it is used.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        var index = 0
        let count = bytes.count
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace(bytes, &index)
        guard index < count else { return [] }
        guard bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipWhitespace(bytes, &index)
        var members: [Member] = []
        if index < count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            skipWhitespace(bytes, &index)
            return index == count ? members : nil
        }
        guard let member = scanMember(bytes, &index) else { return nil }
        members.append(member)
        guard scanRest(bytes, from: index, into: &members, suffix: nil) != nil else { return nil }
        return members
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

    /// The members of `bytes` found with the help of the previous file's: members wholly inside the
    /// bytes both files start with are taken as they are, and so are (moved) those inside the bytes both
    /// end with; only the members between are scanned.
    struct Scan {
        var members: [Member]
        /// How many members at the start are the previous file's first members, at the same place.
        var sameAtStart: Int
        /// How many members at the end are the previous file's last members, with the same bytes.
        var sameAtEnd: Int
    }

    /// ``scan(_:)`` of `bytes`, given the previous file and its members (which ``scan(_:)`` found).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, previous: UnsafeBufferPointer<UInt8>, previousMembers: [Member]) -> Scan? {
        let limit = min(bytes.count, previous.count)
        let prefix = commonPrefix(bytes, previous, limit: limit)
        let suffix = commonSuffix(bytes, previous, limit: limit - prefix)
        // A member is the same if its bytes and the one after them (which ends a number or a literal) are
        // in the common prefix.
        let kept = partitionPoint(previousMembers.count) { previousMembers[$0].value.upperBound >= prefix }
        guard kept > 0 else { return scan(bytes).map { Scan(members: $0, sameAtStart: 0, sameAtEnd: 0) } }
        var members: [Member] = []
        members.reserveCapacity(previousMembers.count + 1)
        members.append(contentsOf: previousMembers[0..<kept])
        let shift = bytes.count - previous.count
        guard let sameAtEnd = scanRest(
            bytes, from: previousMembers[kept - 1].value.upperBound, into: &members,
            suffix: (start: bytes.count - suffix, shift: shift, previousMembers: previousMembers))
        else { return nil }
        return Scan(members: members, sameAtStart: kept, sameAtEnd: sameAtEnd)
    }

    /// Scans from just after a member's value to the end of the file. With `suffix`, a member starting at
    /// or after `suffix.start` where a previous member starts (moved by `shift`) begins the common end:
    /// it and the rest are the previous members, moved. Returns how many members were taken that way.
    private static func scanRest(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, into members: inout [Member],
        suffix: (start: Int, shift: Int, previousMembers: [Member])?
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
            if let suffix, index >= suffix.start {
                let previous = suffix.previousMembers
                let position = partitionPoint(previous.count) { previous[$0].key.lowerBound >= index - suffix.shift }
                if position < previous.count, previous[position].key.lowerBound == index - suffix.shift {
                    for member in previous[position...] {
                        members.append(Member(
                            key: member.key.lowerBound + suffix.shift..<member.key.upperBound + suffix.shift,
                            value: member.value.lowerBound + suffix.shift..<member.value.upperBound + suffix.shift))
                    }
                    return previous.count - position
                }
            }
            guard let member = scanMember(bytes, &index) else { return nil }
            members.append(member)
        }
    }

    /// `"key": value` at `index`, which it moves past.
    private static func scanMember(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Member? {
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

    /// The first position in `0..<count` where `isAfter` holds (it holds for all positions after it).
    private static func partitionPoint(_ count: Int, _ isAfter: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private static func commonPrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        var length = 0
        let block = 256
        while length + block <= limit, memcmp(a.baseAddress! + length, b.baseAddress! + length, block) == 0 { length += block }
        while length < limit, a[length] == b[length] { length += 1 }
        return length
    }

    private static func commonSuffix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        var length = 0
        let block = 256
        while length + block <= limit,
            memcmp(a.baseAddress! + a.count - length - block, b.baseAddress! + b.count - length - block, block) == 0
        {
            length += block
        }
        while length < limit, a[a.count - length - 1] == b[b.count - length - 1] { length += 1 }
        return length
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
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

    /// Brings `values` (the contents of `previousBytes`, whose members are `previousMembers`) to the
    /// contents of `newBytes` (members `newMembers`), parsing only members whose bytes changed.
    ///
    /// Each new member is compared with the previous member at the cursor (the same position, or the next
    /// one after a removal); equal key and value bytes mean the same entry. A key met elsewhere is parsed
    /// and looked up in `values`. Previous members passed over are removed unless their key was met.
    ///
    /// - Precondition: `previousMembers` has one member per key of `values` (no duplicate keys, no `null`).
    /// - Returns: the keys whose value changed (the same set as a full parse and a diff), with `values`
    ///   equal to a full parse of `newBytes`; or `nil`, with `values` as it was, when a changed member does
    ///   not parse or the new file has duplicate keys or `null` values (a full parse then decides).
    static func reread(
        previousBytes: UnsafeBufferPointer<UInt8>, previousMembers: [Member],
        values: inout [ExactKey: DefaultsValue], spellings: inout JSONNumberSpellings,
        newBytes: UnsafeBufferPointer<UInt8>, newMembers: [Member], sameAtStart: Int = 0, sameAtEnd: Int = 0
    ) -> [ExactKey]? {
        // Spellings are only ever replaced by those of the new bytes; on failure the full parse replaces all.
        var undo: [(key: ExactKey, old: DefaultsValue?)] = []
        var changed: [ExactKey] = []
        var metElsewhere = Set<ExactKey>()
        var passedOver: [Int] = []
        // The members known to be the same (see ``Scan``) are not compared.
        guard sameAtStart >= 0, sameAtEnd >= 0,
            sameAtStart + sameAtEnd <= min(newMembers.count, previousMembers.count)
        else { return nil }
        var cursor = sameAtStart
        let previousEnd = previousMembers.count - sameAtEnd

        func set(_ string: String, _ value: DefaultsValue?) {
            let key = ExactKey(string)
            let old = values[key]
            guard old != value else { return }
            undo.append((key, old))
            changed.append(key)
            values[key] = value
        }
        func rollBack() {
            for (key, old) in undo.reversed() { values[key] = old }
        }
        /// The new member is the previous one at `position` if its value bytes are equal; else its value is parsed.
        func compare(_ member: Member, with position: Int) -> Bool {
            let previous = previousMembers[position]
            if equal(newBytes, member.value, previousBytes, previous.value) { return true }
            guard let key = JSONReader.string(in: newBytes, at: member.key),
                let value = JSONReader.memberValue(in: newBytes, at: member.value, key: key, spellings: &spellings)
            else { return false }
            set(key, value)
            return true
        }

        for member in newMembers[sameAtStart..<newMembers.count - sameAtEnd] {
            if cursor < previousEnd, equal(newBytes, member.key, previousBytes, previousMembers[cursor].key) {
                guard compare(member, with: cursor) else { return fail(rollBack) }
                cursor += 1
            } else if cursor + 1 < previousEnd,
                equal(newBytes, member.key, previousBytes, previousMembers[cursor + 1].key)
            {
                passedOver.append(cursor)
                guard compare(member, with: cursor + 1) else { return fail(rollBack) }
                cursor += 2
            } else {
                guard let key = JSONReader.string(in: newBytes, at: member.key),
                    let value = JSONReader.memberValue(in: newBytes, at: member.value, key: key, spellings: &spellings)
                else { return fail(rollBack) }
                metElsewhere.insert(ExactKey(key))
                set(key, value)
            }
        }
        passedOver.append(contentsOf: cursor..<previousEnd)
        for position in passedOver {
            // The previous bytes parsed, so their key does.
            guard let key = JSONReader.string(in: previousBytes, at: previousMembers[position].key) else { return fail(rollBack) }
            if !metElsewhere.contains(ExactKey(key)) {
                set(key, nil)
                spellings.set(nil, forKey: key)
            }
        }
        // Every key of `values` is a key of the new file; one value per member means no duplicate keys
        // and no `null`, the cases where the order of members matters.
        guard values.count == newMembers.count else { return fail(rollBack) }
        return changed
    }

    private static func fail(_ rollBack: () -> Void) -> [ExactKey]? {
        rollBack()
        return nil
    }

    private static func equal(
        _ a: UnsafeBufferPointer<UInt8>, _ aRange: Range<Int>, _ b: UnsafeBufferPointer<UInt8>, _ bRange: Range<Int>
    ) -> Bool {
        aRange.count == bRange.count
            && memcmp(a.baseAddress! + aRange.lowerBound, b.baseAddress! + bRange.lowerBound, aRange.count) == 0
    }
}
