import Foundation

extension DefaultsSuite {
    /// The keys and values stored in the file (plus pending changes), without registered defaults, sorted by
    /// the keys' bytes. Unlike ``values()``, keys that differ only by Unicode normalisation are separate
    /// entries.
    public func storedEntries() -> [(key: String, value: DefaultsValue)] {
        SuiteFormat.sortedEntries(of: storage.storedValues).map { ($0.key, $0.value) }
    }

    /// Throws the error ``init(name:directory:)`` would throw for an invalid suite name (empty, containing
    /// `/` or NUL, `.` or `..`, too long), without touching the file system.
    public static func validate(name: String) throws(DefaultsError) {
        try SuiteLocation.validate(name: name)
    }
}
