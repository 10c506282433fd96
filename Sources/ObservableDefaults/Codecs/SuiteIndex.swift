import Foundation

/// Where the top-level members of a suite file are, and the re-read that parses only the members whose
/// bytes changed: the mechanism the formats share (``JSONSuiteIndex`` for JSON, ``PropertyListXMLSuiteIndex``
/// for XML property lists).
///
/// A re-read after an outside change usually finds one member changed among many. Instead of parsing the
/// whole file and comparing every key, a format's scanner finds each top-level member's key and value byte
/// ranges (no values built, no strings made), and ``reread(previousBytes:previousMembers:values:newBytes:newMembers:sameAtStart:sameAtEnd:key:value:removed:)``
/// compares them with the members of the bytes last read or written: a member whose key and value bytes
/// are equal is unchanged and costs a `memcmp`; only the others are parsed by the format's reader.
///
/// The result is exactly that of a full parse and a diff, or `nil`, and the caller parses the whole file
/// (which also produces the error, with its line and column, for a file that does not parse).
enum SuiteIndex {
    /// One top-level member: the bytes of its key and of its value, as the format's scanner delimits them.
    struct Member: Equatable {
        var key: Range<Int>
        var value: Range<Int>
    }

    /// The members of a file found with the help of the previous file's: members wholly inside the bytes
    /// both files start with are taken as they are, and so are (moved) those inside the bytes both end
    /// with; only the members between are scanned.
    struct Scan {
        var members: [Member]
        /// How many members at the start are the previous file's first members, at the same place.
        var sameAtStart: Int
        /// How many members at the end are the previous file's last members, with the same bytes.
        var sameAtEnd: Int
    }

    /// The bytes a new file ends with that the previous file ends with too, for a format's scanner: a
    /// member starting in them where a previous member starts (moved by `shift`) begins the common end.
    struct CommonEnd {
        /// Where the common end starts in the new file.
        var start: Int
        /// The new file's size minus the previous file's.
        var shift: Int
        var previousMembers: [Member]

        /// When a member of the new file starting at `index` is where a previous member starts, appends
        /// that member and the ones after it, moved, to `members`, and returns how many; else `nil`.
        func appendMembers(startingAt index: Int, to members: inout [Member]) -> Int? {
            guard index >= start else { return nil }
            let previous = previousMembers
            let position = SuiteIndex.partitionPoint(previous.count) { previous[$0].key.lowerBound >= index - shift }
            guard position < previous.count, previous[position].key.lowerBound == index - shift else { return nil }
            for member in previous[position...] {
                members.append(
                    Member(
                        key: member.key.lowerBound + shift..<member.key.upperBound + shift,
                        value: member.value.lowerBound + shift..<member.value.upperBound + shift))
            }
            return previous.count - position
        }
    }

    /// The members of `bytes` given the previous file and its members: those before the first member that
    /// is not wholly in the common start are kept; `scanRest` (the format's scanner) continues after
    /// them, ending early at the common end, and returns how many members it took from there (`nil`: the
    /// file does not scan). Without a kept member, `scanAll` scans the file from its start, ending early at
    /// the common end too.
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, previous: UnsafeBufferPointer<UInt8>, previousMembers: [Member],
        scanAll: (UnsafeBufferPointer<UInt8>, CommonEnd) -> (members: [Member], sameAtEnd: Int)?,
        scanRest: (_ from: Int, _ members: inout [Member], _ end: CommonEnd) -> Int?
    ) -> Scan? {
        let limit = min(bytes.count, previous.count)
        let prefix = commonPrefix(bytes, previous, limit: limit)
        let suffix = commonSuffix(bytes, previous, limit: limit - prefix)
        // A member is the same if its bytes and the one after them (which ends a JSON number or literal)
        // are in the common prefix.
        let kept = partitionPoint(previousMembers.count) { previousMembers[$0].value.upperBound >= prefix }
        let end = CommonEnd(
            start: bytes.count - suffix, shift: bytes.count - previous.count, previousMembers: previousMembers)
        guard kept > 0 else {
            return scanAll(bytes, end).map { Scan(members: $0.members, sameAtStart: 0, sameAtEnd: $0.sameAtEnd) }
        }
        var members: [Member] = []
        members.reserveCapacity(previousMembers.count + 1)
        members.append(contentsOf: previousMembers[0..<kept])
        guard let sameAtEnd = scanRest(previousMembers[kept - 1].value.upperBound, &members, end) else { return nil }
        return Scan(members: members, sameAtStart: kept, sameAtEnd: sameAtEnd)
    }

    // MARK: Re-reading

    /// Brings `values` (the contents of `previousBytes`, whose members are `previousMembers`) to the
    /// contents of `newBytes` (members `newMembers`), parsing only members whose bytes changed.
    ///
    /// Each new member is compared with the previous member at the cursor (the same position, or the next
    /// one after a removal); equal key and value bytes mean the same entry. A key met elsewhere is parsed
    /// and looked up in `values`. Previous members passed over are removed unless their key was met.
    ///
    /// - Parameters:
    ///   - key: the format's reading of the key at a member's key bytes (`nil`: it does not parse).
    ///   - value: the format's reading of the value at a member's value bytes, for a key (`nil`: it does
    ///     not parse, or the reader leaves it to a full parse; `.some(nil)`: JSON's `null`, no value).
    ///   - removed: told each key that is no longer in the file.
    /// - Precondition: `previousMembers` has one member per key of `values` (no duplicate keys, no `null`).
    /// - Returns: the keys whose value changed (the same set as a full parse and a diff), with `values`
    ///   equal to a full parse of `newBytes`; or `nil`, with `values` as it was, when a changed member does
    ///   not parse or the new file has duplicate keys (or, in JSON, `null` values): a full parse then decides.
    static func reread(
        previousBytes: UnsafeBufferPointer<UInt8>, previousMembers: [Member], values: inout [ExactKey: DefaultsValue],
        newBytes: UnsafeBufferPointer<UInt8>, newMembers: [Member], sameAtStart: Int = 0, sameAtEnd: Int = 0,
        key readKey: (UnsafeBufferPointer<UInt8>, Range<Int>) -> String?,
        value readValue: (UnsafeBufferPointer<UInt8>, Range<Int>, String) -> DefaultsValue??,
        removed: (String) -> Void = { _ in }
    ) -> [ExactKey]? {
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
            guard let key = readKey(newBytes, member.key), let value = readValue(newBytes, member.value, key) else {
                return false
            }
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
                guard let key = readKey(newBytes, member.key), let value = readValue(newBytes, member.value, key)
                else { return fail(rollBack) }
                metElsewhere.insert(ExactKey(key))
                set(key, value)
            }
        }
        passedOver.append(contentsOf: cursor..<previousEnd)
        for position in passedOver {
            // The previous bytes parsed, so their key does.
            guard let key = readKey(previousBytes, previousMembers[position].key) else { return fail(rollBack) }
            if !metElsewhere.contains(ExactKey(key)) {
                set(key, nil)
                removed(key)
            }
        }
        // Every key of `values` is a key of the new file; one value per member means no duplicate keys
        // (and no JSON `null`), the cases where the order of members matters.
        guard values.count == newMembers.count else { return fail(rollBack) }
        return changed
    }

    private static func fail(_ rollBack: () -> Void) -> [ExactKey]? {
        rollBack()
        return nil
    }

    // MARK: Bytes

    /// The first position in `0..<count` where `isAfter` holds (it holds for all positions after it).
    static func partitionPoint(_ count: Int, _ isAfter: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    static func commonPrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        var length = 0
        let block = 256
        while length + block <= limit, memcmp(a.baseAddress! + length, b.baseAddress! + length, block) == 0 {
            length += block
        }
        while length < limit, a[length] == b[length] { length += 1 }
        return length
    }

    static func commonSuffix(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
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

    static func equal(
        _ a: UnsafeBufferPointer<UInt8>, _ aRange: Range<Int>, _ b: UnsafeBufferPointer<UInt8>, _ bRange: Range<Int>
    ) -> Bool {
        aRange.count == bRange.count
            && (aRange.isEmpty
                || memcmp(a.baseAddress! + aRange.lowerBound, b.baseAddress! + bRange.lowerBound, aRange.count) == 0)
    }
}
