import Foundation

/// A bounded reader for binary property lists (`bplist00`), producing the value model directly.
///
/// Untrusted bytes never reach `PropertyListSerialization`, which on Linux crashes on some inputs (a set)
/// and expands shared references without limit. This reader checks every offset, size and reference
/// against the file before using it, and limits what a small file can make:
/// - objects in the file: at most ``maximumObjects``;
/// - nesting: at most ``maximumDepth`` containers deep (the JSON and XML readers' limit); a container that
///   contains itself is a reference cycle and is reported as one;
/// - expansion: a file whose containers reference other containers more than once (a tree made from a
///   small graph) may expand to at most ``maximumExpandedValues(fileSize:)`` values and
///   ``maximumExpandedBytes(fileSize:)`` bytes of strings and data.
///
/// It reads booleans, integers (up to 64-bit signed; an unsigned 128-bit-encoded value above `Int.max`
/// becomes its decimal string, as ``DefaultsValue/init(any:)`` does), reals, dates, data, ASCII and UTF-16
/// strings, arrays and dictionaries with string keys. Sets, UIDs, `null`, fill bytes and unknown markers
/// are errors. Every error names the byte offset and, for objects, the object's index.
struct BinaryPropertyListReader {
    /// Objects a file may hold.
    static let maximumObjects = 1 << 24
    /// Containers nested deeper than this are rejected (as in ``JSONReader``).
    static let maximumDepth = 512

    /// Values (each use of an object counts) a file of `fileSize` bytes may expand to. A plist whose
    /// containers are not shared reaches each value through its own reference, which takes at least a byte,
    /// so the file's size bounds it; the factor leaves room for writers that share containers.
    static func maximumExpandedValues(fileSize: Int) -> Int { 4 * fileSize + 1024 }

    /// Bytes of strings and data (each use counts) a file of `fileSize` bytes may expand to.
    static func maximumExpandedBytes(fileSize: Int) -> Int { 64 * fileSize + (1 << 20) }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let fileURL: URL?
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var offsetTableStart = 0
    private var expandedValues = 0
    private var expandedBytes = 0
    /// Containers on the path from the top object to the one being read, to detect cycles.
    private var onPath: [Bool] = []
    /// Strings already decoded, by object index: keys are usually shared by many dictionaries.
    private var strings: [String?] = []

    private init(bytes: UnsafeBufferPointer<UInt8>, fileURL: URL?) {
        self.bytes = bytes
        self.fileURL = fileURL
    }

    /// Whether the bytes start like a binary property list (`bplist`).
    static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.starts(with: "bplist".utf8)
    }

    /// The top-level value of a binary property list.
    static func parse(_ data: Data, fileURL: URL?) throws(DefaultsError) -> DefaultsValue {
        let result: Result<DefaultsValue, DefaultsError> = data.withUnsafeBytes { raw in
            var reader = BinaryPropertyListReader(bytes: raw.bindMemory(to: UInt8.self), fileURL: fileURL)
            return Result { () throws(DefaultsError) in try reader.parseDocument() }
        }
        return try result.get()
    }

    /// The top-level dictionary of a suite file, its keys told apart by their bytes (see ``ExactKey``).
    static func parseSuite(_ data: Data, fileURL: URL?) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        let result: Result<[ExactKey: DefaultsValue], DefaultsError> = data.withUnsafeBytes { raw in
            var reader = BinaryPropertyListReader(bytes: raw.bindMemory(to: UInt8.self), fileURL: fileURL)
            return Result { () throws(DefaultsError) in
                let top = try reader.readTrailer()
                let start = try reader.objectOffset(top)
                guard reader.bytes[start] >> 4 == 0xD else {
                    return try PropertyListReader.topLevelDictionary(reader.readObject(top, depth: 1), fileURL: fileURL)
                }
                reader.expandedValues += 1
                return try reader.readDictionary(top, at: start, depth: 1, keyedBy: { ExactKey($0) })
            }
        }
        return try result.get()
    }

    // MARK: - Header, trailer, offset table

    private mutating func parseDocument() throws(DefaultsError) -> DefaultsValue {
        try readObject(readTrailer(), depth: 1)
    }

    /// Checks the header, the trailer and the offset table's place; returns the top object's index.
    private mutating func readTrailer() throws(DefaultsError) -> Int {
        let header = Array("bplist00".utf8)
        guard bytes.count >= 8 else {
            throw error("truncated binary property list: \(bytes.count) bytes, shorter than the 8-byte header")
        }
        guard bytes.starts(with: header) else {
            let version = String(decoding: bytes[6..<8], as: UTF8.self)
            throw error("unsupported binary property list version '\(version)' (expected 'bplist00')", at: 6)
        }
        guard bytes.count >= 8 + 32 else {
            throw error(
                "truncated binary property list: \(bytes.count) bytes, too short for the header and the 32-byte trailer"
            )
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let objects = readUnsigned(at: trailer + 8, size: 8)
        let top = readUnsigned(at: trailer + 16, size: 8)
        let tableStart = readUnsigned(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize) else {
            throw error("corrupt trailer: offset size \(offsetSize) (expected 1 to 8)", at: trailer + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw error("corrupt trailer: object reference size \(referenceSize) (expected 1 to 8)", at: trailer + 7)
        }
        guard objects >= 1, objects <= UInt64(Self.maximumObjects) else {
            throw error(
                "corrupt trailer: object count \(objects) (expected 1 to \(Self.maximumObjects))", at: trailer + 8)
        }
        objectCount = Int(objects)
        guard top < objects else {
            throw error("corrupt trailer: top object \(top) is not one of the \(objects) objects", at: trailer + 16)
        }
        // The table lies between the header and the trailer; `objects` is small, so nothing overflows.
        guard tableStart >= 8, tableStart <= UInt64(trailer),
            UInt64(trailer) - tableStart >= objects * UInt64(offsetSize)
        else {
            throw error(
                "corrupt trailer: an offset table of \(objects) \(offsetSize)-byte entries at offset \(tableStart) does not fit between the header and the trailer (offset \(trailer))",
                at: trailer + 24)
        }
        offsetTableStart = Int(tableStart)
        onPath = Array(repeating: false, count: objectCount)
        strings = Array(repeating: nil, count: objectCount)
        return Int(top)
    }

    /// The start of object `index`, checked to be inside the object area.
    private func objectOffset(_ index: Int) throws(DefaultsError) -> Int {
        let entry = offsetTableStart + index * offsetSize
        let offset = readUnsigned(at: entry, size: offsetSize)
        guard offset >= 8, offset < UInt64(offsetTableStart) else {
            throw error(
                "corrupt offset table: object \(index) is at offset \(offset), outside the object area (8..<\(offsetTableStart))",
                at: entry)
        }
        return Int(offset)
    }

    // MARK: - Objects

    /// Reads object `index`. Containers recurse (up to ``maximumDepth``), so this function and the
    /// container readers keep their frames small; scalars are read in ``readScalar(_:at:)``.
    private mutating func readObject(_ index: Int, depth: Int) throws(DefaultsError) -> DefaultsValue {
        expandedValues += 1
        if expandedValues > Self.maximumExpandedValues(fileSize: bytes.count) {
            throw error(
                "the property list expands to more than \(Self.maximumExpandedValues(fileSize: bytes.count)) values (containers referenced many times over); refusing to read it",
                object: index, at: nil)
        }
        let start = try objectOffset(index)
        switch bytes[start] >> 4 {
        case 0xA: return .array(try readArray(index, at: start, depth: depth))
        case 0xD: return .dictionary(try readDictionary(index, at: start, depth: depth))
        default: return try readScalar(index, at: start)
        }
    }

    @inline(never)
    private mutating func readArray(_ index: Int, at start: Int, depth: Int) throws(DefaultsError) -> [DefaultsValue] {
        let (count, body) = try readLength(at: start, low: Int(bytes[start] & 0x0F), object: index)
        _ = try checkedEnd(body, count: count, unit: referenceSize, object: index, what: "array")
        try enter(index, depth: depth, at: start)
        defer { onPath[index] = false }
        var array: [DefaultsValue] = []
        array.reserveCapacity(count)
        for position in 0..<count {
            let child = try reference(at: body + position * referenceSize, in: index)
            array.append(try readObject(child, depth: depth + 1))
        }
        return array
    }

    @inline(never)
    private mutating func readDictionary(_ index: Int, at start: Int, depth: Int) throws(DefaultsError) -> [String:
        DefaultsValue]
    {
        try readDictionary(index, at: start, depth: depth) { $0 }
    }

    /// A dictionary whose keys are made by `makeKey`; two equal keys (by `Key`'s equality) are an error.
    private mutating func readDictionary<Key: Hashable>(
        _ index: Int, at start: Int, depth: Int, keyedBy makeKey: (String) -> Key
    ) throws(DefaultsError) -> [Key: DefaultsValue] {
        let (count, body) = try readLength(at: start, low: Int(bytes[start] & 0x0F), object: index)
        _ = try checkedEnd(body, count: count, unit: 2 * referenceSize, object: index, what: "dictionary")
        try enter(index, depth: depth, at: start)
        defer { onPath[index] = false }
        var dictionary = [Key: DefaultsValue](minimumCapacity: count)
        let valuesStart = body + count * referenceSize
        for position in 0..<count {
            let key = try readKey(position, of: index, at: start, body: body)
            let valueIndex = try reference(at: valuesStart + position * referenceSize, in: index)
            let value = try readObject(valueIndex, depth: depth + 1)
            if dictionary.updateValue(value, forKey: makeKey(key)) != nil {
                throw error("duplicate key '\(key)' in a dictionary", object: index, at: start)
            }
        }
        return dictionary
    }

    @inline(never)
    private mutating func readKey(_ position: Int, of index: Int, at start: Int, body: Int) throws(DefaultsError)
        -> String
    {
        let keyIndex = try reference(at: body + position * referenceSize, in: index)
        let keyStart = try objectOffset(keyIndex)
        guard bytes[keyStart] >> 4 == 0x5 || bytes[keyStart] >> 4 == 0x6 else {
            throw error(
                "dictionary key \(position) is object \(keyIndex), marker \(hex(bytes[keyStart])), not a string",
                object: index, at: start)
        }
        expandedValues += 1
        return try readString(keyIndex, at: keyStart)
    }

    @inline(never)
    private mutating func readScalar(_ index: Int, at start: Int) throws(DefaultsError) -> DefaultsValue {
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            case 0x00:
                throw error(
                    "unsupported value: null (marker 0x00); the value model has no null", object: index, at: start)
            default: throw error("unknown object marker \(hex(marker))", object: index, at: start)
            }
        case 0x1:
            return try readInteger(at: start, sizeExponent: low, object: index)
        case 0x2:
            guard low == 2 || low == 3 else {
                throw error(
                    "unsupported real of \(1 << min(low, 15)) bytes (marker \(hex(marker)); expected 4 or 8)",
                    object: index, at: start)
            }
            let raw = try readFixed(at: start + 1, size: 1 << low, object: index, what: "real")
            return .double(low == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard marker == 0x33 else { throw error("unknown object marker \(hex(marker))", object: index, at: start) }
            let raw = try readFixed(at: start + 1, size: 8, object: index, what: "date")
            let seconds = Double(bitPattern: raw)
            guard seconds.isFinite else {
                throw error("date is not a finite number of seconds", object: index, at: start)
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case 0x4:
            let (count, body) = try readLength(at: start, low: low, object: index)
            let end = try checkedEnd(body, count: count, unit: 1, object: index, what: "data")
            try countExpanded(bytes: count, object: index)
            return .data(Data(UnsafeBufferPointer(rebasing: bytes[body..<end])))
        case 0x5, 0x6:
            return .string(try readString(index, at: start))
        case 0x8:
            throw error(
                "unsupported value: UID (marker \(hex(marker))), used by keyed archives, not by settings",
                object: index, at: start)
        case 0xC:
            throw error(
                "unsupported value: set (marker \(hex(marker))); property-list suites hold arrays, not sets",
                object: index, at: start)
        default:
            throw error("unknown object marker \(hex(marker))", object: index, at: start)
        }
    }

    /// Marks container `index` as being read, after checking depth and cycles.
    private mutating func enter(_ index: Int, depth: Int, at start: Int) throws(DefaultsError) {
        if onPath[index] {
            throw error("reference cycle: the container contains itself", object: index, at: start)
        }
        if depth > Self.maximumDepth {
            throw error("containers are nested more than \(Self.maximumDepth) levels deep", object: index, at: start)
        }
        onPath[index] = true
    }

    private func reference(at position: Int, in container: Int) throws(DefaultsError) -> Int {
        let value = readUnsigned(at: position, size: referenceSize)
        guard value < UInt64(objectCount) else {
            throw error(
                "reference to object \(value), but the file has \(objectCount) objects", object: container, at: position
            )
        }
        return Int(value)
    }

    private mutating func readString(_ index: Int, at start: Int) throws(DefaultsError) -> String {
        if let string = strings[index] {
            try countExpanded(bytes: string.utf8.count, object: index)
            return string
        }
        let marker = bytes[start]
        let (count, body) = try readLength(at: start, low: Int(marker & 0x0F), object: index)
        let string: String
        if marker >> 4 == 0x5 {
            let end = try checkedEnd(body, count: count, unit: 1, object: index, what: "ASCII string")
            let text = UnsafeBufferPointer(rebasing: bytes[body..<end])
            if let nonASCII = text.firstIndex(where: { $0 >= 0x80 }) {
                throw error("byte \(hex(text[nonASCII])) in an ASCII string", object: index, at: body + nonASCII)
            }
            string = String(decoding: text, as: UTF8.self)
        } else {
            let end = try checkedEnd(body, count: count, unit: 2, object: index, what: "UTF-16 string")
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var position = body
            while position < end {
                units.append(UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1]))
                position += 2
            }
            var scalars = String.UnicodeScalarView()
            var decoder = UTF16()
            var iterator = units.makeIterator()
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): scalars.append(scalar)
                case .emptyInput: break decoding
                case .error: throw error("unpaired surrogate in a UTF-16 string", object: index, at: start)
                }
            }
            string = String(scalars)
        }
        try countExpanded(bytes: string.utf8.count, object: index)
        strings[index] = string
        return string
    }

    private func readInteger(at start: Int, sizeExponent: Int, object: Int) throws(DefaultsError) -> DefaultsValue {
        switch sizeExponent {
        case 0, 1, 2:
            // 1, 2 and 4 bytes are unsigned.
            return .integer(Int(try readFixed(at: start + 1, size: 1 << sizeExponent, object: object, what: "integer")))
        case 3:
            return .integer(
                Int(Int64(bitPattern: try readFixed(at: start + 1, size: 8, object: object, what: "integer"))))
        case 4:
            let high = try readFixed(at: start + 1, size: 8, object: object, what: "integer")
            let low = try readFixed(at: start + 9, size: 8, object: object, what: "integer")
            guard high == 0 else {
                throw error("integer does not fit in 64 bits", object: object, at: start)
            }
            return low.defaultsValue
        default:
            throw error(
                "unsupported integer of \(1 << sizeExponent) bytes (marker \(hex(bytes[start])))", object: object,
                at: start)
        }
    }

    /// The element count of a data, string or container object and where its body starts: the count is
    /// in the marker's low nibble, or (nibble 0xF) in the integer object that follows the marker.
    private func readLength(at start: Int, low: Int, object: Int) throws(DefaultsError) -> (count: Int, body: Int) {
        if low != 0xF { return (low, start + 1) }
        guard start + 1 < offsetTableStart else {
            throw error("truncated object: expected a length after the marker", object: object, at: start)
        }
        let lengthMarker = bytes[start + 1]
        guard lengthMarker >> 4 == 0x1, lengthMarker & 0x0F <= 3 else {
            throw error(
                "corrupt length: expected an integer marker after \(hex(bytes[start])), found \(hex(lengthMarker))",
                object: object, at: start + 1)
        }
        let size = 1 << Int(lengthMarker & 0x0F)
        let count = try readFixed(at: start + 2, size: size, object: object, what: "length")
        guard count <= UInt64(offsetTableStart) else {
            throw error("length \(Int64(bitPattern: count)) is larger than the file", object: object, at: start + 1)
        }
        return (Int(count), start + 2 + size)
    }

    /// The end of a body of `count` units starting at `body`, checked to lie before the offset table.
    private func checkedEnd(_ body: Int, count: Int, unit: Int, object: Int, what: String) throws(DefaultsError) -> Int
    {
        // `count` is at most the file's size, so the product cannot overflow.
        let end = body + count * unit
        guard end <= offsetTableStart else {
            throw error(
                "truncated \(what): \(count) \(unit == 1 ? "bytes" : "entries") from offset \(body) run past the object area (which ends at \(offsetTableStart))",
                object: object, at: body)
        }
        return end
    }

    private mutating func countExpanded(bytes count: Int, object: Int) throws(DefaultsError) {
        expandedBytes += count
        let limit = Self.maximumExpandedBytes(fileSize: bytes.count)
        if expandedBytes > limit {
            throw error(
                "the property list expands to more than \(limit) bytes of strings and data (objects referenced many times over); refusing to read it",
                object: object, at: nil)
        }
    }

    /// A big-endian unsigned number of `size` bytes inside the object area.
    private func readFixed(at position: Int, size: Int, object: Int, what: String) throws(DefaultsError) -> UInt64 {
        guard position + size <= offsetTableStart else {
            throw error(
                "truncated \(what): \(size) bytes at offset \(position) run past the object area (which ends at \(offsetTableStart))",
                object: object, at: position)
        }
        return readUnsigned(at: position, size: size)
    }

    /// A big-endian unsigned number of 1 to 8 bytes; the caller has checked the range.
    private func readUnsigned(at position: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for offset in 0..<size { value = value << 8 | UInt64(bytes[position + offset]) }
        return value
    }

    private func hex(_ byte: UInt8) -> String {
        "0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }

    private func error(_ message: String, object: Int, at offset: Int?) -> DefaultsError {
        error("object \(object): " + message, at: offset)
    }

    private func error(_ message: String, at offset: Int? = nil) -> DefaultsError {
        let place = offset.map { "binary property list, byte offset \($0): " } ?? "binary property list: "
        return DefaultsError(.malformedFile, message: place + message, fileURL: fileURL)
    }
}
