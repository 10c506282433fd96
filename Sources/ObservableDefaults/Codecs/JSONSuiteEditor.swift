import Foundation

/// Writes changes into a JSON suite file as an edit of the bytes it holds: only the members that change
/// are touched, so the order of members, indentation, spacing, number spellings, comments, trailing
/// commas and unknown keys stay byte for byte, as a person editing the file by hand would leave them.
///
/// - A changed value replaces the value's bytes (a comment inside that value goes with it; one between
///   the colon and the value stays). When a key appears more than once, the last member (the one a read
///   takes) is the one changed.
/// - A removed key takes every member with that key away, with its comma and, when the member has its
///   own line, that line (and a comment after the member on it). Removing the last member removes the
///   comma before it instead, unless the file ends its members with a trailing comma.
/// - A new key is written in the file's own style: the indentation and `": "` spacing of the member next
///   to it, one line when the members share a line, the file's line break (CRLF stays CRLF), and a
///   trailing comma when the last member had one. When the file's keys are in the order the library
///   writes (sorted by their bytes), it goes to its sorted place; otherwise after the last member.
/// - A file without an object (absent, blank) is written in the library's layout (see ``JSONWriter``),
///   after any comments it holds.
struct JSONSuiteEditor {
    typealias Member = SuiteIndex.Member

    /// The file's bytes, edited in place.
    private(set) var bytes: [UInt8]
    /// Where the top-level members are in ``bytes``, kept up to date by each edit.
    private(set) var members: [Member]
    /// Where the top-level object's `{` and `}` are.
    private var open: Int
    private var close: Int
    private let newline: [UInt8]
    private let unit: [UInt8]
    private let spellings: JSONNumberSpellings

    /// An editor of `bytes`, a suite file that parses (as ``JSONReader`` reads it), whose top-level
    /// members are `members` when known (else they are scanned). `nil` when the bytes hold no object
    /// (blank, or comments only), or do not scan.
    init?(bytes: [UInt8], members: [Member]?, spellings: JSONNumberSpellings) {
        guard
            let found = bytes.withUnsafeBufferPointer({ buffer -> (members: [Member], open: Int, close: Int)? in
                guard let members = members ?? JSONSuiteIndex.scan(buffer),
                    let braces = Self.braces(buffer, members: members)
                else { return nil }
                return (members, braces.open, braces.close)
            })
        else { return nil }
        self.bytes = bytes
        self.members = found.members
        open = found.open
        close = found.close
        self.spellings = spellings
        newline = Self.newline(of: bytes)
        unit = Self.indentationUnit(bytes, members: found.members)
    }

    /// The bytes of a suite file holding `values`, written after `previous` (a file without an object:
    /// its comments are kept, blank space is not), in the library's layout.
    static func newFile(_ values: [ExactKey: DefaultsValue], after previous: [UInt8]?, spellings: JSONNumberSpellings)
        -> [UInt8]
    {
        var entries = SuiteFormat.sortedEntries(of: values)
        let object = JSONWriter.encodeSuiteBytes(&entries, reusing: nil, spellings: spellings)
        guard var kept = previous, !kept.allSatisfy(Self.isBlank) else { return object }
        while let last = kept.last, Self.isBlank(last) { kept.removeLast() }
        kept.append(contentsOf: Self.newline(of: kept))
        return kept + object
    }

    // MARK: Editing

    /// Applies `changes` (`nil`: remove the key): removals and replacements of existing members first,
    /// from the end of the file back, then the new keys, in key order.
    mutating func apply(_ changes: [(key: ExactKey, value: DefaultsValue?)]) {
        var existing: [(member: Int, value: DefaultsValue?)] = []
        var added: [(key: ExactKey, value: DefaultsValue)] = []
        let occurrences = self.occurrences(of: changes.map(\.key))
        for (change, found) in zip(changes, occurrences) {
            if found.isEmpty {
                if let value = change.value { added.append((change.key, value)) }
            } else if let value = change.value {
                existing.append((found.last!, value))
            } else {
                for member in found { existing.append((member, nil)) }
            }
        }
        existing.sort { $0.member > $1.member }
        for (member, value) in existing {
            if let value { replaceValue(of: member, with: value) } else { remove(member) }
        }
        guard !added.isEmpty else { return }
        added.sort { $0.key < $1.key }
        let sorted = isSorted
        for (key, value) in added {
            if sorted, let position = firstMember(after: key) {
                insert(key.string, value, before: position)
            } else {
                append(key.string, value)
            }
        }
    }

    /// For each key, the positions of the members with that key, in file order.
    private func occurrences(of keys: [ExactKey]) -> [[Int]] {
        var found = [[Int]](repeating: [], count: keys.count)
        if keys.count <= 8 {
            let encoded = keys.map { Array($0.string.utf8) }
            for position in members.indices {
                for (index, key) in encoded.enumerated() where compareKey(of: position, with: key) == 0 {
                    found[index].append(position)
                }
            }
            return found
        }
        var indexOfKey: [ExactKey: Int] = [:]
        for (index, key) in keys.enumerated() { indexOfKey[key] = index }
        for position in members.indices {
            if let index = indexOfKey[ExactKey(key(of: position))] { found[index].append(position) }
        }
        return found
    }

    /// Replaces the value of the member at `position`, laid out like the member.
    private mutating func replaceValue(of position: Int, with value: DefaultsValue) {
        let member = members[position]
        let text = JSONWriter.encodeValue(
            value, forKey: key(of: position), layout: layout(of: position), spellings: spellings)
        replace(member.value, with: text)
        members[position].value = member.value.lowerBound..<member.value.lowerBound + text.count
    }

    /// Removes the member at `position` with its comma; with its line when it has one to itself.
    private mutating func remove(_ position: Int) {
        let member = members[position]
        let gap = gapAfter(position)
        let isLast = position == members.count - 1
        let end = gap.comma.map { $0 + 1 } ?? member.value.upperBound
        if let lineStart = lineStart(before: member.key.lowerBound), let lineEnd = lineEnd(from: end) {
            replace(lineStart..<lineEnd.after, with: [])
            members.remove(at: position)
            if isLast, gap.comma == nil, position > 0, let comma = gapAfter(position - 1).comma {
                replace(comma..<comma + 1, with: [])
            }
        } else if !isLast {
            replace(member.key.lowerBound..<gap.next, with: [])
            members.remove(at: position)
        } else if position > 0 {
            // The last member on a shared line: from the end of the one before (its comma with it).
            replace(members[position - 1].value.upperBound..<member.value.upperBound, with: [])
            members.remove(at: position)
        } else {
            replace(member.key.lowerBound..<end, with: [])
            members.remove(at: position)
        }
        if members.isEmpty, (open + 1..<close).allSatisfy({ Self.isBlank(bytes[$0]) }) {
            replace(open + 1..<close, with: [])
        }
    }

    /// Inserts a member before the member at `position`, in its style.
    private mutating func insert(_ key: String, _ value: DefaultsValue, before position: Int) {
        let next = members[position]
        if let lineStart = lineStart(before: next.key.lowerBound) {
            let indentation = Array(bytes[lineStart..<next.key.lowerBound])
            let member = encode(key, value, like: position, layout: multiLine(base: indentation))
            replace(lineStart..<lineStart, with: indentation + member + [UInt8(ascii: ",")] + newline)
            members.insert(locate(lineStart + indentation.count, length: member.count), at: position)
        } else {
            let at = next.key.lowerBound
            let member = encode(key, value, like: position, layout: JSONWriter.Layout(oneLine: true))
            replace(at..<at, with: member + [UInt8(ascii: ",")] + inlineSeparator)
            members.insert(locate(at, length: member.count), at: position)
        }
    }

    /// Appends a member after the last one (or into the empty object), in the style of the last one.
    private mutating func append(_ key: String, _ value: DefaultsValue) {
        guard let lastPosition = members.indices.last else {
            appendToEmptyObject(key, value)
            return
        }
        let last = members[lastPosition]
        let gap = gapAfter(lastPosition)
        let comma = gap.comma.map { _ in [UInt8(ascii: ",")] } ?? []
        if let lineStart = lineStart(before: last.key.lowerBound) {
            let indentation = Array(bytes[lineStart..<last.key.lowerBound])
            let member = encode(key, value, like: lastPosition, layout: multiLine(base: indentation))
            let afterLast = gap.comma.map { $0 + 1 } ?? last.value.upperBound
            let at = lineEnd(from: afterLast)?.breakStart ?? afterLast
            let memberStart = at + newline.count + indentation.count
            replace(at..<at, with: newline + indentation + member + comma)
            var located = locate(memberStart, length: member.count)
            if gap.comma == nil {
                replace(last.value.upperBound..<last.value.upperBound, with: [UInt8(ascii: ",")])
                located = Member(key: located.key.shifted(1), value: located.value.shifted(1))
            }
            members.append(located)
        } else {
            let member = encode(key, value, like: lastPosition, layout: JSONWriter.Layout(oneLine: true))
            let separator = inlineSeparator
            let at: Int
            let text: [UInt8]
            if let existingComma = gap.comma {
                at = existingComma + 1
                text = separator + member + [UInt8(ascii: ",")]
            } else {
                at = last.value.upperBound
                text = [UInt8(ascii: ",")] + separator + member
            }
            let memberStart = at + text.count - member.count - comma.count
            replace(at..<at, with: text)
            members.append(locate(memberStart, length: member.count))
        }
    }

    /// The first member of an object that has none: on its own line, after whatever the object holds.
    private mutating func appendToEmptyObject(_ key: String, _ value: DefaultsValue) {
        var at = close
        while at > open + 1, Self.isBlank(bytes[at - 1]) { at -= 1 }
        let member = encode(key, value, like: nil, layout: multiLine(base: unit))
        var text = newline + unit + member
        if !bytes[at..<close].contains(UInt8(ascii: "\n")) { text += newline }
        replace(at..<at, with: text)
        members.append(locate(at + newline.count + unit.count, length: member.count))
    }

    // MARK: Layout

    /// The member text for `key`, with the colon spacing of the member at `position` (`": "` without one).
    private func encode(_ key: String, _ value: DefaultsValue, like position: Int?, layout: JSONWriter.Layout)
        -> [UInt8]
    {
        JSONWriter.encodeMember(
            key: key, value: value, colon: position.map(colon(of:)) ?? [UInt8(ascii: ":"), UInt8(ascii: " ")],
            layout: layout, spellings: spellings)
    }

    /// The member that `text` (starting at `start`) is: its key, then its value after the colon spacing.
    private func locate(_ start: Int, length: Int) -> Member {
        bytes.withUnsafeBufferPointer { buffer in
            var index = start
            var member = Member(key: start..<start, value: start..<start + length)
            if let scanned = JSONSuiteIndex.scanMember(buffer, &index) { member = scanned }
            return member
        }
    }

    /// The layout of the value of the member at `position`: on its lines when it has its own, else one line.
    private func layout(of position: Int) -> JSONWriter.Layout {
        let key = members[position].key.lowerBound
        guard let lineStart = lineStart(before: key) else { return JSONWriter.Layout(oneLine: true) }
        return multiLine(base: Array(bytes[lineStart..<key]))
    }

    private func multiLine(base: [UInt8]) -> JSONWriter.Layout {
        JSONWriter.Layout(newline: newline, unit: unit, base: base)
    }

    /// The bytes from the key to the value of the member at `position` after its key (`": "`, `":"`,
    /// `" : "`), or `": "` when they hold a comment.
    private func colon(of position: Int) -> [UInt8] {
        let member = members[position]
        let between = bytes[member.key.upperBound..<member.value.lowerBound]
        guard between.allSatisfy({ Self.isBlank($0) || $0 == UInt8(ascii: ":") }),
            between.filter({ $0 == UInt8(ascii: ":") }).count == 1
        else { return [UInt8(ascii: ":"), UInt8(ascii: " ")] }
        return Array(between)
    }

    /// What stands between members sharing a line after the comma: the file's own (`" "` or nothing)
    /// between its first two members, else one space.
    private var inlineSeparator: [UInt8] {
        guard members.count >= 2, let comma = gapAfter(0).comma else { return [UInt8(ascii: " ")] }
        let between = bytes[comma + 1..<members[1].key.lowerBound]
        guard between.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else {
            return [UInt8(ascii: " ")]
        }
        return Array(between)
    }

    /// Where the line holding `position` starts, when only spaces and tabs stand before it on the line.
    private func lineStart(before position: Int) -> Int? {
        var index = position
        while index > 0, bytes[index - 1] == UInt8(ascii: " ") || bytes[index - 1] == UInt8(ascii: "\t") {
            index -= 1
        }
        return index > 0 && bytes[index - 1] == UInt8(ascii: "\n") ? index : nil
    }

    /// When only spaces, tabs and comments stand between `position` and the end of its line: where the
    /// line break starts, and the position after it.
    private func lineEnd(from position: Int) -> (breakStart: Int, after: Int)? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = position
            while index < buffer.count {
                switch buffer[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"): index += 1
                case UInt8(ascii: "\r"):
                    guard index + 1 < buffer.count, buffer[index + 1] == UInt8(ascii: "\n") else { return nil }
                    return (index, index + 2)
                case UInt8(ascii: "\n"): return (index, index + 1)
                case UInt8(ascii: "/"):
                    let start = index
                    guard JSONComments.skip(buffer, &index) == true,
                        !buffer[start..<index].contains(UInt8(ascii: "\n"))
                    else { return nil }
                default: return nil
                }
            }
            return nil
        }
    }

    /// After the member at `position`: its comma, if any, and where the next member's key (or the `}`) is.
    private func gapAfter(_ position: Int) -> (comma: Int?, next: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            var index = members[position].value.upperBound
            _ = JSONComments.skipTrivia(buffer, &index)
            guard index < buffer.count, buffer[index] == UInt8(ascii: ",") else { return (nil, index) }
            let comma = index
            index += 1
            _ = JSONComments.skipTrivia(buffer, &index)
            return (comma, index)
        }
    }

    // MARK: Keys

    /// Whether the members' keys are in the order the library writes them (duplicates side by side).
    private var isSorted: Bool {
        guard members.count > 1 else { return true }
        for position in 1..<members.count {
            if ExactKey(key(of: position)) < ExactKey(key(of: position - 1)) { return false }
        }
        return true
    }

    /// The first member whose key sorts after `key`, when there is one.
    private func firstMember(after key: ExactKey) -> Int? {
        let encoded = Array(key.string.utf8)
        let position = SuiteIndex.partitionPoint(members.count) { compareKey(of: $0, with: encoded) > 0 }
        return position < members.count ? position : nil
    }

    /// The key of the member at `position`.
    private func key(of position: Int) -> String {
        bytes.withUnsafeBufferPointer { JSONReader.string(in: $0, at: members[position].key) ?? "" }
    }

    /// The order of the key of the member at `position` and the key with UTF-8 bytes `key`: the bytes
    /// between the quotes compared directly unless they hold an escape.
    private func compareKey(of position: Int, with key: [UInt8]) -> Int {
        let range = members[position].key
        let inner = range.lowerBound + 1..<range.upperBound - 1
        if bytes[inner].contains(UInt8(ascii: "\\")) {
            let decoded = ExactKey(self.key(of: position))
            let other = ExactKey(String(decoding: key, as: UTF8.self))
            return decoded == other ? 0 : (decoded < other ? -1 : 1)
        }
        return bytes.withUnsafeBufferPointer { buffer in
            key.withUnsafeBufferPointer { other in
                let common = min(inner.count, other.count)
                let order =
                    common == 0 ? 0 : memcmp(buffer.baseAddress! + inner.lowerBound, other.baseAddress!, common)
                if order != 0 { return order < 0 ? -1 : 1 }
                return inner.count == other.count ? 0 : (inner.count < other.count ? -1 : 1)
            }
        }
    }

    // MARK: Bytes

    /// Replaces `range` (which no member but the one being edited overlaps) and moves what follows.
    private mutating func replace(_ range: Range<Int>, with text: [UInt8]) {
        bytes.replaceSubrange(range, with: text)
        let shift = text.count - range.count
        guard shift != 0 else { return }
        for position in members.indices where members[position].key.lowerBound >= range.upperBound {
            members[position].key = members[position].key.shifted(shift)
            members[position].value = members[position].value.shifted(shift)
        }
        if close >= range.upperBound { close += shift }
    }

    /// The `{` and `}` of the top-level object whose members are `members`.
    private static func braces(_ bytes: UnsafeBufferPointer<UInt8>, members: [Member]) -> (open: Int, close: Int)? {
        var index = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        guard JSONComments.skipTrivia(bytes, &index), index < bytes.count, bytes[index] == UInt8(ascii: "{")
        else { return nil }
        let open = index
        index = members.last?.value.upperBound ?? open + 1
        guard JSONComments.skipTrivia(bytes, &index), index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            guard JSONComments.skipTrivia(bytes, &index), index < bytes.count else { return nil }
        }
        return bytes[index] == UInt8(ascii: "}") ? (open, index) : nil
    }

    /// `\r\n` when the file's first line break is one, else `\n`.
    private static func newline(of bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(of: UInt8(ascii: "\n")), first > 0, bytes[first - 1] == UInt8(ascii: "\r")
        else { return [UInt8(ascii: "\n")] }
        return [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
    }

    /// The indentation of the first member on a line of its own (two spaces when none is indented).
    private static func indentationUnit(_ bytes: [UInt8], members: [Member]) -> [UInt8] {
        for member in members.prefix(8) {
            var index = member.key.lowerBound
            while index > 0, bytes[index - 1] == UInt8(ascii: " ") || bytes[index - 1] == UInt8(ascii: "\t") {
                index -= 1
            }
            if index > 0, bytes[index - 1] == UInt8(ascii: "\n"), index < member.key.lowerBound {
                return Array(bytes[index..<member.key.lowerBound])
            }
        }
        return [UInt8(ascii: " "), UInt8(ascii: " ")]
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

extension Range<Int> {
    /// The range moved by `shift`.
    fileprivate func shifted(_ shift: Int) -> Range<Int> { lowerBound + shift..<upperBound + shift }
}
