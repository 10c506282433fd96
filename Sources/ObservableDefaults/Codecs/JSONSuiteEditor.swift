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
///   writes (sorted by their bytes), it goes to its sorted place, above the comment lines right above the
///   member it precedes (they describe that member); otherwise after the last member.
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
        unit = Self.indentationUnit(bytes, members: found.members, inside: found.open..<found.close)
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

    /// Applies `changes` (`nil`: remove the key) in two passes over the bytes, whatever their number:
    /// first the replaced values and removed members, then the new keys, in key order.
    mutating func apply(_ changes: [(key: ExactKey, value: DefaultsValue?)]) {
        var replaced: [(member: Int, value: DefaultsValue)] = []
        var removed = Set<Int>()
        var added: [(key: ExactKey, value: DefaultsValue)] = []
        let occurrences = self.occurrences(of: changes.map(\.key))
        for (change, found) in zip(changes, occurrences) {
            if found.isEmpty {
                if let value = change.value { added.append((change.key, value)) }
            } else if let value = change.value {
                replaced.append((found.last!, value))
            } else {
                removed.formUnion(found)
            }
        }
        if !replaced.isEmpty || !removed.isEmpty {
            var edits = replaced.map { replacement in
                Edit(
                    range: members[replacement.member].value,
                    text: JSONWriter.encodeValue(
                        replacement.value, forKey: key(of: replacement.member), layout: layout(of: replacement.member),
                        spellings: spellings),
                    replacesValueOf: replacement.member)
            }
            edits += removals(of: removed)
            commit(edits, removing: removed)
            if members.isEmpty, (open + 1..<close).allSatisfy({ Self.isBlank(bytes[$0]) }) {
                commit([Edit(range: open + 1..<close, text: [])], removing: [])
            }
        }
        guard !added.isEmpty else { return }
        added.sort { $0.key < $1.key }
        if members.isEmpty {
            appendToEmptyObject(added.removeFirst())
            if added.isEmpty { return }
        }
        commit(insertions(of: added), removing: [])
    }

    /// One change of the bytes: `range` (of the bytes before the pass) replaced by `text`.
    private struct Edit {
        var range: Range<Int>
        var text: [UInt8]
        /// The member whose value `text` is.
        var replacesValueOf: Int?
        /// Where new members start in `text`.
        var memberStarts: [Int] = []
    }

    /// The deletions that remove the members at `removed`: a member with a line to itself goes with that
    /// line; one sharing a line goes with what separates it from the next member (from the member before,
    /// for the last ones). When the last member goes and it had no trailing comma, the comma of the last
    /// member left goes too.
    private func removals(of removed: Set<Int>) -> [Edit] {
        guard !removed.isEmpty else { return [] }
        let lastKept = members.indices.last { !removed.contains($0) }
        var edits: [Edit] = []
        for position in removed.sorted() {
            let member = members[position]
            let gap = gapAfter(position)
            let end = gap.comma.map { $0 + 1 } ?? member.value.upperBound
            let range: Range<Int>
            if let lineStart = lineStart(before: member.key.lowerBound), let lineEnd = lineEnd(from: end) {
                range = lineStart..<lineEnd.after
            } else if let lastKept, position > lastKept {
                range = members[lastKept].value.upperBound..<member.value.upperBound
            } else if position == members.count - 1 {
                range = member.key.lowerBound..<end
            } else {
                range = member.key.lowerBound..<gap.next
            }
            edits.append(Edit(range: range, text: []))
        }
        let last = members.count - 1
        if removed.contains(last), gapAfter(last).comma == nil, let lastKept, let comma = gapAfter(lastKept).comma {
            edits.append(Edit(range: comma..<comma + 1, text: []))
        }
        return edits
    }

    /// The insertions of new members (the object has some): before the first member whose key sorts after
    /// theirs when the keys are sorted, else after the last member; in the style of the member next to them.
    private func insertions(of added: [(key: ExactKey, value: DefaultsValue)]) -> [Edit] {
        var groups: [(before: Int?, members: [(key: ExactKey, value: DefaultsValue)])] = []
        let sorted = isSorted
        for member in added {
            let before = sorted ? firstMember(after: member.key) : nil
            if let last = groups.last, last.before == before {
                groups[groups.count - 1].members.append(member)
            } else {
                groups.append((before, [member]))
            }
        }
        var edits: [Edit] = []
        for group in groups {
            if let before = group.before {
                edits.append(insertion(of: group.members, before: before))
            } else {
                edits += appending(group.members)
            }
        }
        return edits
    }

    /// New members before the member at `position`, on lines of their own when it has one.
    private func insertion(of added: [(key: ExactKey, value: DefaultsValue)], before position: Int) -> Edit {
        let next = members[position]
        var edit = Edit(range: next.key.lowerBound..<next.key.lowerBound, text: [])
        if let lineStart = lineStart(before: next.key.lowerBound) {
            let indentation = Array(bytes[lineStart..<next.key.lowerBound])
            let start = commentLinesStart(above: lineStart, of: position)
            edit.range = start..<start
            for (key, value) in added {
                edit.text += indentation
                edit.memberStarts.append(edit.text.count)
                edit.text += encode(key.string, value, like: position, layout: multiLine(base: indentation))
                edit.text += [UInt8(ascii: ",")] + newline
            }
        } else {
            let separator = inlineSeparator
            for (key, value) in added {
                edit.memberStarts.append(edit.text.count)
                edit.text += encode(key.string, value, like: position, layout: JSONWriter.Layout(oneLine: true))
                edit.text += [UInt8(ascii: ",")] + separator
            }
        }
        return edit
    }

    /// New members after the last one: on lines of their own when it has one (after a comment ending its
    /// line), with a trailing comma each when it had one.
    private func appending(_ added: [(key: ExactKey, value: DefaultsValue)]) -> [Edit] {
        let lastPosition = members.count - 1
        let last = members[lastPosition]
        let gap = gapAfter(lastPosition)
        let trailingComma = gap.comma != nil
        var edits: [Edit] = []
        if !trailingComma {
            edits.append(Edit(range: last.value.upperBound..<last.value.upperBound, text: [UInt8(ascii: ",")]))
        }
        let afterLast = gap.comma.map { $0 + 1 } ?? last.value.upperBound
        var edit = Edit(range: afterLast..<afterLast, text: [])
        if let lineStart = lineStart(before: last.key.lowerBound) {
            let indentation = Array(bytes[lineStart..<last.key.lowerBound])
            let at = lineEnd(from: afterLast)?.breakStart ?? afterLast
            edit.range = at..<at
            for (index, (key, value)) in added.enumerated() {
                edit.text += newline + indentation
                edit.memberStarts.append(edit.text.count)
                edit.text += encode(key.string, value, like: lastPosition, layout: multiLine(base: indentation))
                if trailingComma || index < added.count - 1 { edit.text.append(UInt8(ascii: ",")) }
            }
        } else {
            let separator = inlineSeparator
            for (index, (key, value)) in added.enumerated() {
                edit.text += separator
                edit.memberStarts.append(edit.text.count)
                edit.text += encode(key.string, value, like: lastPosition, layout: JSONWriter.Layout(oneLine: true))
                if trailingComma || index < added.count - 1 { edit.text.append(UInt8(ascii: ",")) }
            }
        }
        edits.append(edit)
        return edits
    }

    /// The first member of an object that has none: on its own line, after whatever the object holds.
    private mutating func appendToEmptyObject(_ added: (key: ExactKey, value: DefaultsValue)) {
        var at = close
        while at > open + 1, Self.isBlank(bytes[at - 1]) { at -= 1 }
        var edit = Edit(range: at..<at, text: newline + unit)
        edit.memberStarts = [edit.text.count]
        edit.text += encode(added.key.string, added.value, like: nil, layout: multiLine(base: unit))
        if !bytes[at..<close].contains(UInt8(ascii: "\n")) { edit.text += newline }
        commit([edit], removing: [])
    }

    /// Applies `edits` (ranges of the current bytes; deletions may overlap, other edits do not) in one pass,
    /// and brings the members up to date: those at `removed` are gone, replaced values and new members
    /// are where their text went, the others moved.
    private mutating func commit(_ edits: [Edit], removing removed: Set<Int>) {
        // Sorted by position; edits at the same position stay in the order given.
        let ordered = edits.indices.sorted {
            (edits[$0].range.lowerBound, $0) < (edits[$1].range.lowerBound, $1)
        }.map { edits[$0] }
        var merged: [Edit] = []
        merged.reserveCapacity(ordered.count)
        for edit in ordered {
            if let last = merged.last, last.text.isEmpty, edit.text.isEmpty, !edit.range.isEmpty,
                edit.range.lowerBound < last.range.upperBound
            {
                merged[merged.count - 1].range =
                    last.range.lowerBound..<max(last.range.upperBound, edit.range.upperBound)
            } else {
                merged.append(edit)
            }
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + merged.reduce(0) { $0 + $1.text.count })
        // The replaced values in file order (the edits are sorted), with where their text went.
        var replacedValues: [(member: Int, value: Range<Int>)] = []
        var added: [Int] = []
        var cursor = 0
        for edit in merged {
            output.append(contentsOf: bytes[cursor..<edit.range.lowerBound])
            let start = output.count
            output.append(contentsOf: edit.text)
            if let member = edit.replacesValueOf { replacedValues.append((member, start..<output.count)) }
            added += edit.memberStarts.map { start + $0 }
            cursor = edit.range.upperBound
        }
        output.append(contentsOf: bytes[cursor...])

        var moved: [Member] = []
        moved.reserveCapacity(members.count - removed.count + added.count)
        var shift = 0
        var next = 0
        var nextReplaced = 0
        for position in members.indices where removed.isEmpty || !removed.contains(position) {
            let member = members[position]
            while next < merged.count, merged[next].range.upperBound <= member.key.lowerBound {
                shift += merged[next].text.count - merged[next].range.count
                next += 1
            }
            var value = member.value.shifted(shift)
            if nextReplaced < replacedValues.count, replacedValues[nextReplaced].member == position {
                value = replacedValues[nextReplaced].value
                nextReplaced += 1
            }
            moved.append(Member(key: member.key.shifted(shift), value: value))
        }
        let totalShift = merged.reduce(0) { $0 + $1.text.count - $1.range.count }
        bytes = output
        close += totalShift
        guard !added.isEmpty else {
            members = moved
            return
        }
        let new = added.map { locate($0) }
        var all: [Member] = []
        all.reserveCapacity(moved.count + new.count)
        var newIndex = 0
        for member in moved {
            while newIndex < new.count, new[newIndex].key.lowerBound < member.key.lowerBound {
                all.append(new[newIndex])
                newIndex += 1
            }
            all.append(member)
        }
        all += new[newIndex...]
        members = all
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

    // MARK: Layout

    /// The member text for `key`, with the colon spacing of the member at `position` (`": "` without one).
    private func encode(_ key: String, _ value: DefaultsValue, like position: Int?, layout: JSONWriter.Layout)
        -> [UInt8]
    {
        JSONWriter.encodeMember(
            key: key, value: value, colon: position.map(colon(of:)) ?? [UInt8(ascii: ":"), UInt8(ascii: " ")],
            layout: layout, spellings: spellings)
    }

    /// The member whose key starts at `start` (a member the editor wrote there).
    private func locate(_ start: Int) -> Member {
        bytes.withUnsafeBufferPointer { buffer in
            var index = start
            return JSONSuiteIndex.scanMember(buffer, &index) ?? Member(key: start..<start, value: start..<start)
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

    /// Where the comment lines right above the line starting at `lineStart` (that of the member at
    /// `position`) begin (see ``SuiteTextLines/commentLinesStart(_:above:below:skipComment:)``): below the
    /// comma of the member before, or the `{`.
    private func commentLinesStart(above lineStart: Int, of position: Int) -> Int {
        let boundary: Int
        if position == 0 {
            boundary = open + 1
        } else {
            guard let comma = gapAfter(position - 1).comma else { return lineStart }
            boundary = comma + 1
        }
        return SuiteTextLines.commentLinesStart(bytes, above: lineStart, below: boundary, skipComment: Self.skipComment)
    }

    /// See ``SuiteTextLines/lineStart(_:before:)``.
    private func lineStart(before position: Int) -> Int? {
        SuiteTextLines.lineStart(bytes, before: position)
    }

    /// See ``SuiteTextLines/lineEnd(_:from:skipComment:)``.
    private func lineEnd(from position: Int) -> (breakStart: Int, after: Int)? {
        SuiteTextLines.lineEnd(bytes, from: position, skipComment: Self.skipComment)
    }

    /// A `//` or `/* */` comment at the index.
    private static func skipComment(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool? {
        bytes[index] == UInt8(ascii: "/") ? JSONComments.skip(bytes, &index) : false
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
        var previous = keyBytes(of: 0)
        for position in 1..<members.count {
            let current = keyBytes(of: position)
            if Self.compare(current, previous) < 0 { return false }
            previous = current
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

    /// The order of the key of the member at `position` and the key with UTF-8 bytes `key`.
    private func compareKey(of position: Int, with key: [UInt8]) -> Int {
        Self.compare(keyBytes(of: position), key[...])
    }

    /// The UTF-8 bytes of the key of the member at `position`: the bytes between its quotes, or, when
    /// they hold an escape, those of the key they spell.
    private func keyBytes(of position: Int) -> ArraySlice<UInt8> {
        let range = members[position].key
        guard range.count >= 2 else { return [] }
        let inner = bytes[range.lowerBound + 1..<range.upperBound - 1]
        guard inner.contains(UInt8(ascii: "\\")) else { return inner }
        return Array(key(of: position).utf8)[...]
    }

    private static func compare(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        SuiteTextLines.compare(a, b)
    }

    // MARK: Bytes

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

    private static func newline(of bytes: [UInt8]) -> [UInt8] {
        SuiteTextLines.newline(of: bytes)
    }

    /// The indentation of the first member on a line of its own; in an object without members, that of the
    /// first comment on a line of its own inside `object` (its braces); two spaces when none is indented.
    private static func indentationUnit(_ bytes: [UInt8], members: [Member], inside object: Range<Int>) -> [UInt8] {
        let starts: [Int]
        if members.isEmpty {
            starts = bytes[object].indices.compactMap { index -> Int? in
                guard bytes[index] == UInt8(ascii: "\n") else { return nil }
                var first = index + 1
                while first < object.upperBound, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
                return first < object.upperBound && bytes[first] == UInt8(ascii: "/") ? first : nil
            }
        } else {
            starts = members.prefix(8).map(\.key.lowerBound)
        }
        return SuiteTextLines.indentationUnit(bytes, starts: starts.prefix(8)) ?? [UInt8(ascii: " "), UInt8(ascii: " ")]
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        SuiteTextLines.isBlank(byte)
    }
}

extension Range<Int> {
    /// The range moved by `shift`.
    fileprivate func shifted(_ shift: Int) -> Range<Int> { lowerBound + shift..<upperBound + shift }
}
