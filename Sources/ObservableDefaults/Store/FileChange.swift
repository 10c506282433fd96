/// A version of a suite file that ``SuiteFile`` read or wrote, handed to memory's merge
/// (``SuiteStorage/merge(_:)``) before it becomes the known version.
enum FileChange {
    /// The file parsed (or was written): memory takes it in.
    case adopted(AdoptedVersion)
    /// The file does not parse: memory keeps what it has, and the error is kept and maybe published.
    case broken(BrokenVersion)
}

/// A version of the file that parsed and is now the known one.
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
}

/// A version of the file that does not parse.
struct BrokenVersion {
    var error: DefaultsError
    /// A new version of the file or a new error: published once, not on every event.
    var isNews: Bool
}

/// What ``SuiteFile/reread(gate:merge:)`` found. `Merged` is what the caller's merge returned.
enum ReadResult<Merged> {
    /// Memory already holds this version of the file (or the gate refused the read).
    case unchanged
    /// The file does not parse; what the merge of the broken version returned.
    case broken(Merged)
    /// The file could not be read at all.
    case unreadable(DefaultsError)
    /// A new version was adopted: what the merge returned, and sorted entries to release once observers
    /// have heard (freeing a large suite's entries takes a while).
    case adopted(Merged, released: [SuiteFile.Entry]?)
}

/// Why ``SuiteFile/write(_:merge:)`` did not write: the error, and when the file did not parse, what
/// the merge of the broken version returned.
struct WriteFailure<Merged: Sendable>: Error {
    var error: DefaultsError
    var broken: Merged?
}
