/// A version of the file that parsed, read or written by ``SuiteFile``: memory merges it
/// (``SuiteStorage/merge(_:)``), then it becomes the known version (``SuiteFile/makeKnown(_:)``).
struct AdoptedVersion {
    /// The file's contents.
    var contents: [ExactKey: DefaultsValue]
    /// The keys whose value in the file differs from the version known before; `nil` when any key may
    /// differ (a full re-read), so memory compares them all.
    var changedKeys: [ExactKey]?
    /// The pending changes a write put in the file (empty for a re-read).
    var written: [ExactKey: DefaultsValue?] = [:]
    /// The key and value an ``SuiteFile/AtomicUpdate`` stored in the file.
    var update: (key: ExactKey, value: DefaultsValue?)?
    /// The version's identity; `nil` when there is no file.
    var identity: FileIdentity?
    /// Sorted entries to release once observers have heard (freeing a large suite's entries takes a while).
    var released: [SuiteFile.Entry]?
    /// The file exists and holds nothing but whitespace: someone emptied it (the library never writes an
    /// empty suite), and every key reads its default.
    var isBlank = false
}

/// A version of the file that does not parse: memory keeps what it has, and the error is kept and maybe
/// published.
struct BrokenVersion {
    var error: DefaultsError
    /// A new version of the file or a new error: published once, not on every event.
    var isNews: Bool
}

/// What ``SuiteFile/reread(_:gate:)`` found.
enum FileRead {
    /// Memory already holds this version of the file (or the gate refused the read).
    case unchanged
    /// The file could not be read at all.
    case unreadable(DefaultsError)
    /// The file does not parse.
    case broken(BrokenVersion)
    /// A new version, in the document now; memory merges it next.
    case adopted(AdoptedVersion)
}

/// Why ``SuiteFile/write(_:into:)`` did not write: the error, and the version that does not parse when
/// that was why.
struct WriteFailure: Error {
    var error: DefaultsError
    var broken: BrokenVersion?
}
