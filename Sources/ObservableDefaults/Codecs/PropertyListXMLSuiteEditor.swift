import Foundation

/// Writes changes into an XML property-list suite file as an edit of the bytes it holds, as
/// ``JSONSuiteEditor`` does for JSON: only the members that change are touched, so the XML declaration,
/// the DOCTYPE, comments, processing instructions, the order of keys, indentation, line breaks (CRLF), a
/// byte-order mark and the spelling of untouched values (`<real>5.0</real>`, entities, CDATA) stay byte
/// for byte. A member is a `<key>` element of the top-level `<dict>` and the value element after it.
///
/// - A changed value replaces the value element; its new text is ``PropertyListWriter``'s, indented
///   like the member (the file's indentation unit and line break).
/// - A removed key takes its member away with its line when the member has lines of its own (and a
///   comment after it on its last line), else with the spaces after it.
/// - A new key is written like the member next to it (its indentation and what stands between its key
///   and value). When the file's keys are in the order the library writes (sorted by their bytes), it
///   goes to its sorted place, above the comment lines right above the member it precedes; otherwise
///   after the last member. `<dict/>` becomes `<dict>` … `</dict>`; a dictionary left holding only
///   whitespace becomes `<dict/>`, as the library writes it.
///
/// A file the library wrote comes out byte for byte as a full rewrite would make it. UTF-16 and binary
/// property lists are not edited (``init(bytes:members:)`` is `nil`): they are rewritten whole.
struct PropertyListXMLSuiteEditor {
    typealias Member = SuiteIndex.Member

    /// Where a document's members and its top-level dictionary's tags are.
    struct Layout {
        var members: [Member]
        /// The `<dict>` tag, or the whole `<dict/>`.
        var open: Range<Int>
        /// The `</dict>` tag; `nil` for `<dict/>`.
        var close: Range<Int>?
    }

    /// The file's bytes, edited in place.
    private(set) var bytes: [UInt8]
    /// Where the top-level members are in ``bytes``, kept up to date by each edit.
    private(set) var members: [Member]
    private let newline: [UInt8]
    private let unit: [UInt8]

    /// An editor of `bytes`, an XML property list that parses with a dictionary at the top, whose
    /// members are `members` when known (else the document is scanned). `nil` for UTF-16, a binary
    /// property list, or bytes that do not scan.
    init?(bytes: [UInt8], members: [Member]?) {
        guard !XMLTextEncoding.hasUTF16ByteOrderMark(bytes), !bytes.starts(with: Array("bplist".utf8)) else {
            return nil
        }
        if let members, !members.isEmpty {
            self.members = members
        } else {
            guard let layout = bytes.withUnsafeBufferPointer({ PropertyListXMLReader.scanEditableSuite($0) }) else {
                return nil
            }
            self.members = layout.members
        }
        self.bytes = bytes
        newline = SuiteTextLines.newline(of: bytes)
        unit = Self.indentationUnit(bytes, members: self.members)
    }

    /// One level of the file's indentation: that of the first member on a line of its own, less that of
    /// the `</dict>` line (the dictionary may be indented inside `<plist>`); a tab when none is indented.
    private static func indentationUnit(_ bytes: [UInt8], members: [Member]) -> [UInt8] {
        guard let member = SuiteTextLines.indentationUnit(bytes, starts: members.prefix(8).map(\.key.lowerBound))
        else { return [UInt8(ascii: "\t")] }
        var index = members[members.count - 1].value.upperBound
        while index < bytes.count {
            if SuiteTextLines.isBlank(bytes[index]) {
                index += 1
            } else if bytes.withUnsafeBufferPointer({ skipComment($0, &index) }) != true {
                break
            }
        }
        if let lineStart = SuiteTextLines.lineStart(bytes, before: index), lineStart < index,
            member.starts(with: bytes[lineStart..<index]), member.count > index - lineStart
        {
            return Array(member.dropFirst(index - lineStart))
        }
        return member
    }

    // MARK: Editing

    /// Applies `changes` (`nil`: remove the key) in two passes over the bytes, whatever their number:
    /// first the replaced values and removed members, then the new keys, in key order.
    mutating func apply(_ changes: [(key: ExactKey, value: DefaultsValue?)]) {
        var edits: [Edit] = []
        var removed = Set<Int>()
        var added: [(key: ExactKey, value: DefaultsValue)] = []
        let found = positions(of: changes.map(\.key))
        for (change, position) in zip(changes, found) {
            switch (position, change.value) {
            case (let position?, let value?):
                let member = members[position]
                edits.append(
                    Edit(
                        range: member.value, text: encodeValue(value, base: indentation(of: member.value.lowerBound)),
                        replacesValueOf: position))
            case (let position?, nil):
                removed.insert(position)
                edits.append(Edit(range: removal(of: position), text: []))
            case (nil, let value?):
                added.append((change.key, value))
            case (nil, nil):
                break
            }
        }
        if !edits.isEmpty {
            commit(edits, removing: removed)
            if members.isEmpty { collapseEmptyDictionary() }
        }
        guard !added.isEmpty else { return }
        added.sort { $0.key < $1.key }
        if members.isEmpty {
            commit([firstMembers(added)], removing: [])
        } else {
            commit(insertions(of: added), removing: [])
        }
    }

    /// One change of the bytes: `range` (of the bytes before the pass) replaced by `text`.
    private struct Edit {
        var range: Range<Int>
        var text: [UInt8]
        /// The member whose value `text` is.
        var replacesValueOf: Int?
        /// The new members in `text`, relative to its start.
        var newMembers: [Member] = []
    }

    /// What goes with the member at `position`: its lines when it has them to itself (with a comment after
    /// it on its last line), else the member and the spaces after it (before it, at the end of a line).
    private func removal(of position: Int) -> Range<Int> {
        let member = members[position]
        let lineEnd = SuiteTextLines.lineEnd(bytes, from: member.value.upperBound, skipComment: Self.skipComment)
        if let lineStart = SuiteTextLines.lineStart(bytes, before: member.key.lowerBound), let lineEnd {
            return lineStart..<lineEnd.after
        }
        var end = member.value.upperBound
        while end < bytes.count, bytes[end] == UInt8(ascii: " ") || bytes[end] == UInt8(ascii: "\t") { end += 1 }
        guard lineEnd != nil else { return member.key.lowerBound..<end }
        var start = member.key.lowerBound
        while start > 0, bytes[start - 1] == UInt8(ascii: " ") || bytes[start - 1] == UInt8(ascii: "\t") {
            start -= 1
        }
        return start..<member.value.upperBound
    }

    /// The insertions of new members (the dictionary has some): before the first member whose key sorts
    /// after theirs when the keys are sorted, else after the last member; in the style of the member next
    /// to them.
    private func insertions(of added: [(key: ExactKey, value: DefaultsValue)]) -> [Edit] {
        var groups: [(before: Int?, members: [(key: ExactKey, value: DefaultsValue)])] = []
        let keys = members.indices.map(keyBytes(of:))
        let sorted = keys.indices.dropFirst().allSatisfy { SuiteTextLines.compare(keys[$0 - 1], keys[$0]) < 0 }
        for member in added {
            var before: Int?
            if sorted {
                let encoded = Array(member.key.string.utf8)[...]
                let position = SuiteIndex.partitionPoint(keys.count) { SuiteTextLines.compare(keys[$0], encoded) > 0 }
                before = position < keys.count ? position : nil
            }
            if let last = groups.last, last.before == before {
                groups[groups.count - 1].members.append(member)
            } else {
                groups.append((before, [member]))
            }
        }
        return groups.map { group in
            if let before = group.before {
                insertion(of: group.members, before: before)
            } else {
                appending(group.members)
            }
        }
    }

    /// New members before the member at `position`: on lines of their own (above the comment lines right
    /// above it) when it has one, else on its line.
    private func insertion(of added: [(key: ExactKey, value: DefaultsValue)], before position: Int) -> Edit {
        let next = members[position]
        let style = self.style(of: position)
        if let lineStart = SuiteTextLines.lineStart(bytes, before: next.key.lowerBound) {
            let boundary = position == 0 ? nil : members[position - 1].value.upperBound
            let start =
                boundary.map {
                    SuiteTextLines.commentLinesStart(bytes, above: lineStart, below: $0, skipComment: Self.skipComment)
                } ?? lineStart
            var edit = Edit(range: start..<start, text: [])
            for (key, value) in added {
                edit.text += style.indentation
                append((key, value), style: style, to: &edit)
                edit.text += newline
            }
            return edit
        }
        var edit = Edit(range: next.key.lowerBound..<next.key.lowerBound, text: [])
        for (key, value) in added {
            append((key, value), style: style, to: &edit)
            edit.text.append(UInt8(ascii: " "))
        }
        return edit
    }

    /// New members after the last one: on lines of their own when it has one (after a comment ending its
    /// line), else on its line.
    private func appending(_ added: [(key: ExactKey, value: DefaultsValue)]) -> Edit {
        let last = members[members.count - 1]
        let style = self.style(of: members.count - 1)
        let ownLine = SuiteTextLines.lineStart(bytes, before: last.key.lowerBound) != nil
        let lineEnd = SuiteTextLines.lineEnd(bytes, from: last.value.upperBound, skipComment: Self.skipComment)
        let at = ownLine ? (lineEnd?.breakStart ?? last.value.upperBound) : last.value.upperBound
        var edit = Edit(range: at..<at, text: [])
        for (key, value) in added {
            edit.text += ownLine ? newline + style.indentation : [UInt8(ascii: " ")]
            append((key, value), style: style, to: &edit)
        }
        return edit
    }

    /// The members of a dictionary that has none: `<dict/>` opened, or on lines of their own before
    /// `</dict>`, one level deeper than the line holding the `<dict>`.
    private func firstMembers(_ added: [(key: ExactKey, value: DefaultsValue)]) -> Edit {
        guard let layout = bytes.withUnsafeBufferPointer({ PropertyListXMLReader.scanEditableSuite($0) }) else {
            return Edit(range: 0..<0, text: [])
        }
        let base = indentation(of: layout.open.lowerBound)
        let style = Style(indentation: base + unit, separator: newline + base + unit, valueBase: base + unit)
        var edit: Edit
        if let close = layout.close {
            let closeLineStart = SuiteTextLines.lineStart(bytes, before: close.lowerBound)
            let at = closeLineStart ?? close.lowerBound
            edit = Edit(range: at..<at, text: closeLineStart == nil ? newline : [])
            for (key, value) in added {
                edit.text += style.indentation
                append((key, value), style: style, to: &edit)
                edit.text += newline
            }
            if closeLineStart == nil { edit.text += base }
        } else {
            edit = Edit(range: layout.open, text: Array("<dict>".utf8))
            for (key, value) in added {
                edit.text += newline + style.indentation
                append((key, value), style: style, to: &edit)
            }
            edit.text += newline + base + Array("</dict>".utf8)
        }
        return edit
    }

    /// A dictionary whose last member went, holding only whitespace: written `<dict/>`.
    private mutating func collapseEmptyDictionary() {
        guard let layout = bytes.withUnsafeBufferPointer({ PropertyListXMLReader.scanEditableSuite($0) }),
            let close = layout.close,
            bytes[layout.open.upperBound..<close.lowerBound].allSatisfy(SuiteTextLines.isBlank)
        else { return }
        commit([Edit(range: layout.open.lowerBound..<close.upperBound, text: Array("<dict/>".utf8))], removing: [])
    }

    /// Appends the member `added` to `edit`'s text in `style`, recording where it is.
    private func append(_ added: (key: ExactKey, value: DefaultsValue), style: Style, to edit: inout Edit) {
        let keyStart = edit.text.count
        edit.text += PropertyListWriter.encodeKey(added.key.string)
        let keyEnd = edit.text.count
        edit.text += style.separator
        let valueStart = edit.text.count
        edit.text += encodeValue(added.value, base: style.valueBase)
        edit.newMembers.append(Member(key: keyStart..<keyEnd, value: valueStart..<edit.text.count))
    }

    /// Applies `edits` (ranges of the current bytes, not overlapping) in one pass, and brings the members
    /// up to date: those at `removed` are gone, replaced values and new members are where their text went,
    /// the others moved.
    private mutating func commit(_ edits: [Edit], removing removed: Set<Int>) {
        let ordered = edits.indices.sorted {
            (edits[$0].range.lowerBound, $0) < (edits[$1].range.lowerBound, $1)
        }.map { edits[$0] }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + ordered.reduce(0) { $0 + $1.text.count })
        var replacedValues: [Int: Range<Int>] = [:]
        var added: [Member] = []
        var cursor = 0
        for edit in ordered {
            output.append(contentsOf: bytes[cursor..<edit.range.lowerBound])
            let start = output.count
            output.append(contentsOf: edit.text)
            if let member = edit.replacesValueOf { replacedValues[member] = start..<output.count }
            added += edit.newMembers.map { Member(key: $0.key.shifted(start), value: $0.value.shifted(start)) }
            cursor = edit.range.upperBound
        }
        output.append(contentsOf: bytes[cursor...])

        var all: [Member] = []
        all.reserveCapacity(members.count - removed.count + added.count)
        var shift = 0
        var next = 0
        var newIndex = 0
        for position in members.indices where removed.isEmpty || !removed.contains(position) {
            let member = members[position]
            while next < ordered.count, ordered[next].range.upperBound <= member.key.lowerBound {
                shift += ordered[next].text.count - ordered[next].range.count
                next += 1
            }
            let key = member.key.shifted(shift)
            while newIndex < added.count, added[newIndex].key.lowerBound < key.lowerBound {
                all.append(added[newIndex])
                newIndex += 1
            }
            all.append(Member(key: key, value: replacedValues[position] ?? member.value.shifted(shift)))
        }
        all += added[newIndex...]
        bytes = output
        members = all
    }

    // MARK: Layout

    /// How a member is laid out: the indentation of its line, what stands between its key and value, and
    /// the indentation of the value's line.
    private struct Style {
        var indentation: [UInt8]
        var separator: [UInt8]
        var valueBase: [UInt8]
    }

    /// The style of the member at `position`: its own, or a line break and its indentation between key and
    /// value when a comment stands there.
    private func style(of position: Int) -> Style {
        let member = members[position]
        let indentation = indentation(of: member.key.lowerBound)
        var separator = Array(bytes[member.key.upperBound..<member.value.lowerBound])
        if !separator.allSatisfy(SuiteTextLines.isBlank) { separator = newline + indentation }
        return Style(
            indentation: indentation, separator: separator, valueBase: self.indentation(of: member.value.lowerBound))
    }

    /// The indentation of the line holding `position`.
    private func indentation(of position: Int) -> [UInt8] {
        SuiteTextLines.indentation(bytes, ofLineHolding: position)
    }

    private func encodeValue(_ value: DefaultsValue, base: [UInt8]) -> [UInt8] {
        PropertyListWriter.encodeValue(
            value, layout: PropertyListWriter.Layout(newline: newline, unit: unit, base: base))
    }

    /// `<!-- … -->` at the index.
    private static func skipComment(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool? {
        let open = Array("<!--".utf8)
        guard index + open.count <= bytes.count, bytes[index..<index + open.count].elementsEqual(open) else {
            return false
        }
        var end = index + open.count
        while end + 2 < bytes.count {
            if bytes[end] == UInt8(ascii: "-"), bytes[end + 1] == UInt8(ascii: "-"), bytes[end + 2] == UInt8(ascii: ">")
            {
                index = end + 3
                return true
            }
            end += 1
        }
        return nil
    }

    // MARK: Keys

    /// For each key, the position of the member with that key (a property list has each key once).
    private func positions(of keys: [ExactKey]) -> [Int?] {
        var found = [Int?](repeating: nil, count: keys.count)
        if keys.count <= 8 {
            let encoded = keys.map { Array($0.string.utf8)[...] }
            for position in members.indices {
                let key = keyBytes(of: position)
                for (index, wanted) in encoded.enumerated() where SuiteTextLines.compare(key, wanted) == 0 {
                    found[index] = position
                }
            }
            return found
        }
        var indexOfKey: [ExactKey: Int] = [:]
        for (index, key) in keys.enumerated() { indexOfKey[key] = index }
        for position in members.indices {
            if let index = indexOfKey[ExactKey(String(decoding: keyBytes(of: position), as: UTF8.self))] {
                found[index] = position
            }
        }
        return found
    }

    /// The UTF-8 bytes of the key of the member at `position`: the text of a plain `<key>…</key>` without
    /// markup or references, else the key it reads as.
    private func keyBytes(of position: Int) -> ArraySlice<UInt8> {
        let range = members[position].key
        if range.count >= 11, bytes[range.lowerBound + 4] == UInt8(ascii: ">"),
            bytes[range.upperBound - 6] == UInt8(ascii: "<"), bytes[range.upperBound - 5] == UInt8(ascii: "/")
        {
            // A member's key range starts with `<key` and ends with `key>` (the scan checked them).
            let inner = bytes[range.lowerBound + 5..<range.upperBound - 6]
            if !inner.contains(UInt8(ascii: "&")), !inner.contains(UInt8(ascii: "<")) { return inner }
        }
        let key = bytes.withUnsafeBufferPointer { PropertyListXMLReader.key(in: $0, at: range.lowerBound) } ?? ""
        return Array(key.utf8)[...]
    }
}

extension Range<Int> {
    /// The range moved by `shift`.
    fileprivate func shifted(_ shift: Int) -> Range<Int> { lowerBound + shift..<upperBound + shift }
}
