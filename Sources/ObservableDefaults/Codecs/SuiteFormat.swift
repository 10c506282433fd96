import Foundation

/// The file format of a suite: JSON (the default) or a property list.
public enum SuiteFormat: String, Sendable, CaseIterable {
    /// JSON, read by the library's own parser (comments and trailing commas allowed). A new file is
    /// pretty-printed with sorted keys; a write to an existing one edits only the members it changes.
    case json
    /// A property list: XML or binary when read, XML when written. A write to an XML file edits only the
    /// members it changes, as for JSON; a binary or UTF-16 one is written whole.
    case propertyList = "plist"

    /// The file extension of this format, without the dot.
    public var fileExtension: String { rawValue }

    /// The format for a file extension (`json`, `plist`), or `nil` for any other.
    public init?(fileExtension: String) {
        self.init(rawValue: fileExtension.lowercased())
    }

    /// Parses a whole suite file into its top-level dictionary.
    ///
    /// An empty file is an empty suite. Anything else that is not a dictionary at the top level, or does
    /// not parse, throws a ``DefaultsError`` of kind ``DefaultsError/Kind/malformedFile`` naming `fileURL`,
    /// the line and column, and what was expected.
    func decode(_ bytes: Data, fileURL: URL) throws(DefaultsError) -> [ExactKey: DefaultsValue] {
        var spellings = JSONNumberSpellings()
        return try decode(bytes, fileURL: fileURL, spellings: &spellings)
    }

    /// ``decode(_:fileURL:)``, also giving the text of JSON numbers the writer would spell differently,
    /// for ``encodeBytes(_:reusing:capacity:spellings:fileURL:)`` to keep (always empty for property lists).
    func decode(_ bytes: Data, fileURL: URL, spellings: inout JSONNumberSpellings) throws(DefaultsError) -> [ExactKey:
        DefaultsValue]
    {
        switch self {
        case .json: return try JSONReader.parseSuite(bytes, fileURL: fileURL, spellings: &spellings)
        case .propertyList:
            spellings = JSONNumberSpellings()
            return try PropertyListReader.parseSuite(bytes, fileURL: fileURL)
        }
    }

    /// Serialises a suite's contents (JSON: pretty, keys sorted; property list: XML).
    ///
    /// Values need not be normalised first: the bytes are the same as for their normalised form.
    func encode(_ values: [ExactKey: DefaultsValue]) throws(DefaultsError) -> Data {
        var entries = SuiteFormat.sortedEntries(of: values)
        switch self {
        case .json: return Data(JSONWriter.encodeSuiteBytes(&entries, reusing: nil))
        case .propertyList: return Data(PropertyListWriter.encodeSuiteBytes(&entries, reusing: nil))
        }
    }

    /// One key and value of a suite, as the writers take them: sorted by key.
    struct Entry {
        var key: String
        var value: DefaultsValue
        /// Where the writer put this entry's text in the bytes it produced last, while the entry is
        /// unchanged since: the next write copies those bytes instead of encoding the entry again.
        var fragment: Range<Int>?

        init(key: String, value: DefaultsValue) {
            self.key = key
            self.value = value
        }
    }

    /// A dictionary's entries sorted by the bytes of their keys (see ``ExactKey``), the order both
    /// writers use.
    static func sortedEntries(of dictionary: [String: DefaultsValue]) -> [Entry] {
        sorted(dictionary.map { Entry(key: $0.key, value: $0.value) })
    }

    /// ``sortedEntries(of:)`` of a suite's top level.
    static func sortedEntries(of dictionary: [ExactKey: DefaultsValue]) -> [Entry] {
        sorted(dictionary.map { Entry(key: $0.key.string, value: $0.value) })
    }

    private static func sorted(_ entries: [Entry]) -> [Entry] {
        var entries = entries
        entries.sort { ExactKey($0.key) < ExactKey($1.key) }
        return entries
    }

    /// The bytes of a suite file with these entries (sorted by key), exactly as ``encode(_:)`` makes them
    /// for the same contents.
    /// - Parameters:
    ///   - entries: the suite's entries; their `fragment`s are set to where their text is in the result.
    ///   - previous: the bytes this returned last time, for entries that still have a `fragment`.
    ///   - capacity: the expected size, for example that of the file last written.
    ///   - spellings: the text of numbers as the file last read held them (JSON), kept where the value is.
    ///   - fileURL: the file the bytes are for, named in errors.
    /// - Throws: for a property list, the ``validate(_:forKey:fileURL:)`` error of an entry to be encoded
    ///   that XML cannot hold. A `set` refuses such values, but a binary property list can hold any
    ///   character or date, and a write of other keys must not turn them into XML other tools reject.
    func encodeBytes(
        _ entries: inout [Entry], reusing previous: [UInt8]?, capacity: Int,
        spellings: JSONNumberSpellings = JSONNumberSpellings(), fileURL: URL? = nil
    ) throws(DefaultsError) -> [UInt8] {
        switch self {
        case .json:
            return JSONWriter.encodeSuiteBytes(&entries, reusing: previous, capacity: capacity, spellings: spellings)
        case .propertyList:
            for entry in entries where entry.fragment == nil {
                try validate(entry.value, forKey: entry.key, fileURL: fileURL)
            }
            return PropertyListWriter.encodeSuiteBytes(&entries, reusing: previous, capacity: capacity)
        }
    }

    /// The value as it will read back from a file of this format, so memory always equals what the file
    /// holds: JSON stores dates and data as strings (see ``JSONRepresentation``), property lists hold
    /// dates in whole seconds (rounded down).
    func normalize(_ value: consuming DefaultsValue) -> DefaultsValue {
        // The same in every format (most writes): moved through, not copied.
        switch value {
        case .string, .integer, .double, .bool: return value
        default: break
        }
        return switch self {
        case .json: JSONRepresentation.normalize(value)
        case .propertyList: PropertyListRepresentation.normalize(value)
        }
    }
}
