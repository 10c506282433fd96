/// What is wrong with a header block HPACK cannot decode (RFC 7541); `text` says it for a person, to follow
/// "sent a malformed answer: ".
struct HPACKError: Error, Equatable {
    /// What is wrong, for a person.
    let text: String
    /// An error saying `text`.
    init(_ text: String) { self.text = text }
}

/// HPACK's integer representation (RFC 7541, 5.1).
enum HPACKInteger {
    /// The largest integer the decoder accepts: every size and index HTTP/2 carries fits far below it, and
    /// bounding it keeps a hostile run of continuation bytes from overflowing or looping long.
    static let maximum = 1 << 28

    /// Decodes an integer with an `prefixBits`-bit prefix starting at `bytes[index]`, moving `index` past it.
    static func decode(_ bytes: [UInt8], at index: inout Int, prefixBits: Int) throws(HPACKError) -> Int {
        guard index < bytes.count else { throw HPACKError("a header block ends in the middle of an integer") }
        let mask = (1 << prefixBits) - 1
        var value = Int(bytes[index]) & mask
        index += 1
        guard value == mask else { return value }
        var shift = 0
        while true {
            guard index < bytes.count else { throw HPACKError("a header block ends in the middle of an integer") }
            let byte = bytes[index]
            index += 1
            value += Int(byte & 0x7F) << shift
            guard value <= maximum else {
                throw HPACKError("an integer larger than \(maximum), expected a size or index below it")
            }
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift <= 28 else {
                throw HPACKError("an integer of more than 5 bytes, expected a size or index below \(maximum)")
            }
        }
    }

    /// Appends `value` with an `prefixBits`-bit prefix whose other bits are `flags`.
    static func encode(_ value: Int, prefixBits: Int, flags: UInt8, into bytes: inout [UInt8]) {
        let mask = (1 << prefixBits) - 1
        guard value >= mask else {
            bytes.append(flags | UInt8(value))
            return
        }
        bytes.append(flags | UInt8(mask))
        var rest = value - mask
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}

/// HPACK's static table (RFC 7541, Appendix A): entry `i` (from 1) is `entries[i - 1]`.
enum HPACKStaticTable {
    /// The 61 entries, in index order.
    static let entries: [HTTP2Header] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
        ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
        ("content-length", ""), ("content-location", ""), ("content-range", ""), ("content-type", ""),
        ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
        ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
        ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""),
        ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
        ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
        ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", "")
    ].map { HTTP2Header($0.0, $0.1) }

    /// The index of the first entry named `name`, if any.
    static let nameIndex: [String: Int] = {
        var index: [String: Int] = [:]
        for (offset, entry) in entries.enumerated() where index[entry.name] == nil { index[entry.name] = offset + 1 }
        return index
    }()
}

/// HPACK's dynamic table (RFC 7541, 2.3.2 and 4): newest entry first, evicted from the oldest as entries are
/// added or the size limit shrinks. An entry's size is its name's and value's bytes plus 32.
struct HPACKDynamicTable {
    /// Entries, oldest first (the newest is appended; index 62 is the last element).
    private(set) var entries: [HTTP2Header] = []
    private(set) var size = 0
    private(set) var maximumSize: Int

    /// An empty table of at most `maximumSize` bytes.
    init(maximumSize: Int) { self.maximumSize = maximumSize }

    /// What `entry` counts against a table's size (RFC 7541, 4.1).
    static func size(of entry: HTTP2Header) -> Int { entry.name.utf8.count + entry.value.utf8.count + 32 }

    /// The entry at dynamic index `index` (0: the newest).
    func entry(_ index: Int) -> HTTP2Header? {
        index < entries.count ? entries[entries.count - 1 - index] : nil
    }

    /// How many entries the table holds.
    var count: Int { entries.count }

    /// Adds `entry` as the newest, evicting the oldest entries as needed.
    mutating func add(_ entry: HTTP2Header) {
        let entrySize = Self.size(of: entry)
        guard entrySize <= maximumSize else {
            // An entry larger than the table empties it and is not added (RFC 7541, 4.4).
            entries.removeAll()
            size = 0
            return
        }
        entries.append(entry)
        size += entrySize
        evict()
    }

    /// Sets the size limit (a dynamic table size update), evicting down to it.
    mutating func resize(_ newMaximum: Int) {
        maximumSize = newMaximum
        evict()
    }

    private mutating func evict() {
        var dropped = 0
        while size > maximumSize, dropped < entries.count {
            size -= Self.size(of: entries[dropped])
            dropped += 1
        }
        if dropped > 0 { entries.removeFirst(dropped) }
    }
}

/// Decodes header blocks (RFC 7541) of one connection, keeping its dynamic table between blocks.
///
/// Bounded: the table never grows beyond ``allowedTableSize`` (what the connection advertised; a size update
/// above it is an error), and a block's decoded header list (names, values and 32 bytes each, as HTTP/2's
/// SETTINGS_MAX_HEADER_LIST_SIZE counts) never beyond ``maximumListSize``.
struct HPACKDecoder {
    /// The largest dynamic table size the encoder may choose (SETTINGS_HEADER_TABLE_SIZE we sent).
    let allowedTableSize: Int
    /// The most bytes a decoded header list may have.
    let maximumListSize: Int
    private(set) var table: HPACKDynamicTable

    /// A decoder whose table may grow to `allowedTableSize` bytes and whose header lists may have
    /// `maximumListSize` bytes.
    init(allowedTableSize: Int = 4096, maximumListSize: Int) {
        self.allowedTableSize = allowedTableSize
        self.maximumListSize = maximumListSize
        table = HPACKDynamicTable(maximumSize: allowedTableSize)
    }

    /// Decodes one complete header block.
    mutating func decode(_ block: [UInt8]) throws(HPACKError) -> [HTTP2Header] {
        var headers: [HTTP2Header] = []
        var listSize = 0
        var index = 0
        var atStart = true
        while index < block.count {
            let byte = block[index]
            if byte & 0x80 != 0 {  // indexed field
                let number = try HPACKInteger.decode(block, at: &index, prefixBits: 7)
                try append(lookup(number), to: &headers, listSize: &listSize)
            } else if byte & 0x40 != 0 {  // literal with incremental indexing
                let header = try literal(block, at: &index, prefixBits: 6)
                table.add(header)
                try append(header, to: &headers, listSize: &listSize)
            } else if byte & 0x20 != 0 {  // dynamic table size update
                guard atStart else {
                    throw HPACKError(
                        "a dynamic table size update after a header field, expected it at the block's start")
                }
                let size = try HPACKInteger.decode(block, at: &index, prefixBits: 5)
                guard size <= allowedTableSize else {
                    throw HPACKError(
                        "a dynamic table size update to \(size) bytes, above the \(allowedTableSize) bytes the client allows"
                    )
                }
                table.resize(size)
                continue
            } else {  // literal without indexing (0000) or never indexed (0001)
                let header = try literal(block, at: &index, prefixBits: 4)
                try append(header, to: &headers, listSize: &listSize)
            }
            atStart = false
        }
        return headers
    }

    private func append(_ header: HTTP2Header, to headers: inout [HTTP2Header], listSize: inout Int) throws(HPACKError)
    {
        listSize += HPACKDynamicTable.size(of: header)
        guard listSize <= maximumListSize else {
            throw HPACKError("a header list larger than \(EtcdReadLimits.describe(maximumListSize))")
        }
        headers.append(header)
    }

    private func lookup(_ number: Int) throws(HPACKError) -> HTTP2Header {
        let staticCount = HPACKStaticTable.entries.count
        if number >= 1, number <= staticCount { return HPACKStaticTable.entries[number - 1] }
        if number > staticCount, let entry = table.entry(number - staticCount - 1) { return entry }
        throw HPACKError(
            "the header table index \(number), expected 1 to \(staticCount + table.count)")
    }

    private func literal(_ block: [UInt8], at index: inout Int, prefixBits: Int) throws(HPACKError) -> HTTP2Header {
        let nameNumber = try HPACKInteger.decode(block, at: &index, prefixBits: prefixBits)
        let name = nameNumber == 0 ? try string(block, at: &index) : try lookup(nameNumber).name
        return HTTP2Header(name, try string(block, at: &index))
    }

    private func string(_ block: [UInt8], at index: inout Int) throws(HPACKError) -> String {
        guard index < block.count else { throw HPACKError("a header block ends where a string was expected") }
        let huffman = block[index] & 0x80 != 0
        let length = try HPACKInteger.decode(block, at: &index, prefixBits: 7)
        guard length <= block.count - index else {
            throw HPACKError("a string of \(length) bytes, but the header block has only \(block.count - index) left")
        }
        let raw = block[index..<index + length]
        index += length
        if huffman {
            return String(decoding: try HPACKHuffman.decode(raw, limit: maximumListSize), as: UTF8.self)
        }
        return String(decoding: raw, as: UTF8.self)
    }
}

/// Encodes header blocks simply: a header whose name and value are a static table entry as that index, any
/// other as a literal without indexing (its name by static index when there is one), strings Huffman-coded
/// when that is shorter. It never adds to the peer's dynamic table, so a field's representation depends on the
/// field alone; the encoder keeps two things: its first block sets the table size to 0, which holds whatever
/// size the peer's SETTINGS later allow, and the last block's fields with their representations, so that a
/// field equal to the one at the same place in the last block is copied instead of encoded again, and one of
/// the same name has only its value encoded (a gRPC call's headers differ from the previous call's in
/// `grpc-timeout`, and in the path when the method differs).
struct HPACKEncoder {
    private var announcedEmptyTable = false
    /// The last block's fields, and where each one's representation ends in ``lastBytes``.
    private var lastFields: [HTTP2Header] = []
    private var lastEnds: [Int] = []
    /// Where each of the last block's literal fields' name ends, the value following (`nil`: an indexed field).
    private var lastNameEnds: [Int?] = []
    /// The last block's field representations (without the table size update).
    private var lastBytes: [UInt8] = []

    /// The header block for `headers`, in order.
    mutating func encode(_ headers: [HTTP2Header]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lastBytes.count + 32)
        var ends: [Int] = []
        var nameEnds: [Int?] = []
        ends.reserveCapacity(headers.count)
        nameEnds.reserveCapacity(headers.count)
        for (index, header) in headers.enumerated() {
            let start = bytes.count
            var nameEnd: Int?
            if index < lastFields.count, lastFields[index].name == header.name {
                let lastStart = index == 0 ? 0 : lastEnds[index - 1]
                if lastFields[index].value == header.value {
                    bytes.append(contentsOf: lastBytes[lastStart..<lastEnds[index]])
                    nameEnd = lastNameEnds[index].map { start + $0 - lastStart }
                } else if let lastNameEnd = lastNameEnds[index] {
                    // The same name with another value (`grpc-timeout`, a new token): only the value is new.
                    bytes.append(contentsOf: lastBytes[lastStart..<lastNameEnd])
                    nameEnd = bytes.count
                    Self.string(header.value, into: &bytes)
                } else {
                    nameEnd = Self.field(header, into: &bytes)
                }
            } else {
                nameEnd = Self.field(header, into: &bytes)
            }
            ends.append(bytes.count)
            nameEnds.append(nameEnd)
        }
        lastFields = headers
        lastEnds = ends
        lastNameEnds = nameEnds
        lastBytes = bytes
        guard !announcedEmptyTable else { return bytes }
        announcedEmptyTable = true
        var block: [UInt8] = []
        HPACKInteger.encode(0, prefixBits: 5, flags: 0x20, into: &block)
        return block + bytes
    }

    /// Appends the representation of `header`; where its name ends, for a literal (`nil`: indexed whole).
    private static func field(_ header: HTTP2Header, into bytes: inout [UInt8]) -> Int? {
        if let first = HPACKStaticTable.nameIndex[header.name] {
            // Entries of one name are next to each other in the static table.
            let entries = HPACKStaticTable.entries
            var index = first
            while index <= entries.count, entries[index - 1].name == header.name {
                if entries[index - 1].value == header.value {
                    HPACKInteger.encode(index, prefixBits: 7, flags: 0x80, into: &bytes)
                    return nil
                }
                index += 1
            }
            HPACKInteger.encode(first, prefixBits: 4, flags: 0, into: &bytes)
        } else {
            bytes.append(0)
            string(header.name, into: &bytes)
        }
        let nameEnd = bytes.count
        string(header.value, into: &bytes)
        return nameEnd
    }

    private static func string(_ text: String, into bytes: inout [UInt8]) {
        let raw = text.utf8
        let coded = HPACKHuffman.encodedCount(raw)
        if coded < raw.count {
            HPACKInteger.encode(coded, prefixBits: 7, flags: 0x80, into: &bytes)
            HPACKHuffman.encode(raw, into: &bytes)
        } else {
            HPACKInteger.encode(raw.count, prefixBits: 7, flags: 0, into: &bytes)
            bytes.append(contentsOf: raw)
        }
    }
}
