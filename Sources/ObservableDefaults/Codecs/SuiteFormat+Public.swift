import Foundation

extension SuiteFormat {
    /// Parses the bytes of a whole suite file in this format into its keys and values, exactly as a suite
    /// reads its file (used by `defaults import`).
    /// - Throws: a ``DefaultsError`` of kind ``DefaultsError/Kind/malformedFile`` naming `fileURL`, the line
    ///   and the column when the bytes do not parse.
    ///
    /// Keys that differ only by Unicode normalisation are one `String` key: one of them is kept.
    public func decodeSuite(_ bytes: Data, fileURL: URL) throws(DefaultsError) -> [String: DefaultsValue] {
        try decode(bytes, fileURL: fileURL).stringKeyed
    }

    /// Serialises keys and values exactly as a suite writes its file in this format (used by
    /// `defaults export`).
    public func encodeSuite(_ values: [String: DefaultsValue]) throws(DefaultsError) -> Data {
        try encode(values.exactKeyed)
    }
}

extension SuiteFormat {
    /// ``decodeSuite(_:fileURL:)`` as a list sorted by the keys' bytes, in which keys that differ only by
    /// Unicode normalisation (`"caf\u{E9}"`, `"cafe\u{301}"`) are separate entries, as in the file.
    public func decodeSuiteEntries(_ bytes: Data, fileURL: URL) throws(DefaultsError) -> [(
        key: String, value: DefaultsValue
    )] {
        SuiteFormat.sortedEntries(of: try decode(bytes, fileURL: fileURL)).map { ($0.key, $0.value) }
    }

    /// ``encodeSuite(_:)`` of a list of entries (in any order), keeping keys that differ only by Unicode
    /// normalisation apart. A key given twice with the same bytes keeps its last value.
    public func encodeSuite(entries: [(key: String, value: DefaultsValue)]) throws(DefaultsError) -> Data {
        var values: [ExactKey: DefaultsValue] = [:]
        for (key, value) in entries { values[ExactKey(key)] = value }
        return try encode(values)
    }
}
