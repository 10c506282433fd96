import Foundation

/// The records a ``CloudLocalCopy`` appends to its journal files between whole saves: a local write is on
/// disk with one short append, whatever the size of the store.
///
/// Each record is a newline, then a frame of the slots' form (``CloudLocalCopySlot``) naming the save it
/// follows, then the JSON of the written keys' entries as they were when it was appended:
///
/// ```
///
/// observable-defaults cloud journal record, after sequence 00000000000000000042, length 0000000074, fnv1a64 0123456789abcdef
/// {
///   "k": {"value": 2, "revision": 7, "pending": {"base": 7, "value": 2}}
/// }
/// ```
///
/// An entry holds the key's `value` (or `"removed": true`), its server `revision` if it has one, and its
/// pending write in the slots' form if it has one. A record that is cut short (its process killed in the
/// middle of the append) or damaged does not verify and is skipped; the records after it are still found,
/// since each starts on a new line, and a line of JSON never starts with the prefix (JSON strings hold no
/// raw newline).
enum CloudLocalCopyJournal {
    static let recordPrefix = "observable-defaults cloud journal record, after sequence "

    /// One record as appended: `content` (the entries' JSON) following the save with sequence `after`.
    static func bytes(after sequence: UInt64, content: Data) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\n")]
        bytes.reserveCapacity(recordPrefix.utf8.count + 100 + content.count)
        CloudLocalCopySlot.appendFrame(prefix: recordPrefix, sequence: sequence, content: content, to: &bytes)
        return bytes
    }

    /// What one journal file holds.
    struct Contents {
        /// The records that verify, in the order they were appended.
        var records: [(after: UInt64, content: Data)] = []
        /// Records that do not verify although all their bytes are there (or bytes that belong to no
        /// record): damage. An append cut short (its process killed in the middle of it) is not counted,
        /// wherever it is: a process that loads the copy next appends after it.
        var damaged = 0
    }

    /// The records in a journal file's bytes.
    static func contents(of data: Data) -> Contents {
        let marker = Data(("\n" + recordPrefix).utf8)
        var starts: [Data.Index] = []
        var position = data.startIndex
        while let found = data.range(of: marker, in: position..<data.endIndex) {
            starts.append(found.lowerBound)
            position = found.upperBound
        }
        var contents = Contents()
        // Bytes before the first record: only the start of an append cut short.
        if !isCutShortStart(data[data.startIndex..<(starts.first ?? data.endIndex)], of: marker) {
            contents.damaged += 1
        }
        for (number, start) in starts.enumerated() {
            let end = number + 1 < starts.count ? starts[number + 1] : data.endIndex
            let segment = data[start..<end]
            let frameStart = segment.index(after: start)
            if let frame = CloudLocalCopySlot.readFrame(prefix: recordPrefix, in: segment, at: frameStart) {
                contents.records.append((frame.sequence, frame.content))
                if !isCutShortStart(segment[frame.end...], of: marker) { contents.damaged += 1 }
            } else if !CloudLocalCopySlot.isCutShortFrame(prefix: recordPrefix, segment[frameStart...]) {
                contents.damaged += 1
            }
        }
        return contents
    }

    /// Whether `bytes` are nothing, or the first bytes of a record's `marker` (an append cut short there).
    private static func isCutShortStart(_ bytes: Data, of marker: Data) -> Bool {
        bytes.count < marker.count && marker.starts(with: bytes)
    }

    /// A record's content: the entries of `keys` as `state` holds them now, as JSON (taken under the
    /// store's lock). Written directly, reusing each pending write's value text (encoded once, when the
    /// write was made): through a dictionary and the suite writer, it was a fifth of an append's cost.
    static func content(of keys: some Collection<String>, in state: CloudState) -> Data {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (number, key) in keys.sorted().enumerated() {
            bytes.append(contentsOf: number == 0 ? Array("\n  ".utf8) : Array(",\n  ".utf8))
            bytes.append(contentsOf: JSONWriter.encodeValue(.string(key)))
            bytes.append(contentsOf: ": {".utf8)
            let write = state.pending[key]
            if let value = state.values[key] {
                bytes.append(contentsOf: "\"value\": ".utf8)
                if let text = write?.text, write?.value == value {
                    bytes.append(contentsOf: text)
                } else {
                    bytes.append(contentsOf: JSONWriter.encodeValue(value))
                }
            } else {
                bytes.append(contentsOf: "\"removed\": true".utf8)
            }
            if let revision = state.serverRevisions[key] {
                bytes.append(contentsOf: ", \"revision\": \(revision)".utf8)
            }
            if let time = state.writeTimes[key] { bytes.append(contentsOf: ", \"at\": \(time)".utf8) }
            if let write {
                bytes.append(contentsOf: ", \"pending\": {\"base\": \(write.baseRevision), ".utf8)
                if let value = write.value {
                    bytes.append(contentsOf: "\"value\": ".utf8)
                    bytes.append(contentsOf: write.text ?? Data(JSONWriter.encodeValue(value)))
                } else {
                    bytes.append(contentsOf: "\"removed\": true".utf8)
                }
                if let batch = write.batch { bytes.append(contentsOf: ", \"batch\": \(batch)".utf8) }
                if write.hasSteps || write.madeByEndedUpdate { bytes.append(contentsOf: ", \"update\": true".utf8) }
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "\n}".utf8)
        return Data(bytes)
    }

    /// One key's entry in a record.
    struct Entry {
        var key: String
        var value: DefaultsValue?
        var revision: Int64?
        /// When the key was last written locally (``CloudState/writeTimes``).
        var writeTime: Int64?
        /// The pending write without its generation, which replay numbers.
        var pending: PendingWrite?
    }

    /// The entries of a record's `content`, checked before any is applied.
    static func entries(in content: Data, fileURL: URL) throws(DefaultsError) -> [Entry] {
        var entries: [Entry] = []
        for (key, entry) in try JSONReader.parseSuite(content, fileURL: fileURL).stringKeyed.sorted(by: {
            $0.key < $1.key
        }) {
            func bad(_ what: String) -> DefaultsError {
                CloudLocalCopy.malformed("\(what) for \"\(key)\" in a journal record")
            }
            guard case .dictionary(let fields) = entry else { throw bad("an object") }
            var parsed = Entry(key: key, value: fields["value"])
            guard parsed.value != nil || fields["removed"] == .bool(true) else {
                throw bad("\"value\" or \"removed\": true")
            }
            if let field = fields["revision"] {
                guard case .integer(let number) = field else { throw bad("an integer revision") }
                parsed.revision = Int64(number)
            }
            if let field = fields["at"] {
                guard case .integer(let number) = field else { throw bad("an integer write time") }
                parsed.writeTime = Int64(number)
            }
            if let field = fields["pending"] {
                parsed.pending = try CloudLocalCopy.decodePending(field, key: key, generation: 0)
            }
            entries.append(parsed)
        }
        return entries
    }

    /// Puts each entry's key in `state` as the record holds it: value, server revision and pending write.
    static func apply(_ entries: [Entry], to state: inout CloudState) {
        for entry in entries {
            state.setValue(entry.value, forKey: entry.key)
            state.serverRevisions[entry.key] = entry.revision
            state.writeTimes[entry.key] = entry.writeTime
            if let revision = entry.revision {
                state.knownRevisions[entry.key] = max(state.knownRevisions[entry.key] ?? 0, revision)
            }
            if var write = entry.pending {
                write.generation = state.nextGeneration
                write.chainStart = write.generation
                state.pending[entry.key] = write
                state.nextGeneration += 1
            } else {
                state.pending[entry.key] = nil
            }
        }
    }

    /// Applies to `state` the records of `journals` (the journal files' bytes) that no save in the slots
    /// took in: those that follow the save with sequence `loaded` or a later one, in the order they were
    /// appended. `state` is created when there is none (no save to start from). Returns per journal how
    /// many records did not verify or decode.
    @discardableResult
    static func replay(_ journals: [Data], after loaded: UInt64, onto state: inout CloudState?, fileURL: URL) -> [Int] {
        var damaged: [Int] = []
        var records: [(after: UInt64, order: Int, journal: Int, content: Data)] = []
        for (journal, data) in journals.enumerated() {
            let contents = contents(of: data)
            damaged.append(contents.damaged)
            for record in contents.records where record.after >= loaded {
                records.append((record.after, records.count, journal, record.content))
            }
        }
        // Records after one save are in one file, in the order appended; those after a later save come later.
        records.sort { ($0.after, $0.order) < ($1.after, $1.order) }
        for record in records {
            do {
                let entries = try entries(in: record.content, fileURL: fileURL)
                if state == nil { state = CloudState() }
                apply(entries, to: &state!)
            } catch {
                damaged[record.journal] += 1
            }
        }
        return damaged
    }
}
