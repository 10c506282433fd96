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

extension DefaultsSuite {
    /// Throws the error ``init(name:directory:)`` would throw for an invalid suite name (empty, containing
    /// `/` or NUL, `.` or `..`, too long), without touching the file system.
    public static func validate(name: String) throws(DefaultsError) {
        try SuiteLocation.validate(name: name)
    }
}
