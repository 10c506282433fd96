/// A suite's error channel: the problems that persist now (the file does not parse, pending changes
/// cannot be written, outside changes cannot be seen), the last error published, and who hears about
/// errors and their recoveries.
///
/// Its methods change the slots and return whom to tell; the storage calls those handlers once its lock
/// is released. Kept under the storage's state lock with memory, so a merge that ends a file error does
/// so in the same step that makes the file's values readable.
struct SuiteErrorChannel {
    typealias Handler = @Sendable (DefaultsErrorEvent) -> Void
    typealias RecoveryHandler = @Sendable () -> Void

    /// Why the file's current version cannot be used (it does not parse, or cannot be read yet), until a
    /// version that can.
    var fileError: DefaultsError?
    /// The failure keeping pending changes from the file (not a parse error; that is `fileError`),
    /// reported once; cleared when the changes land.
    private(set) var writeError: DefaultsError?
    /// Why outside changes cannot be seen now (the directory is gone or cannot be watched), until the
    /// watch is back.
    private(set) var watchError: DefaultsError?
    /// The watcher update `watchError` comes from (see ``WatchEvent/watchLost(_:generation:)``).
    private var watchGeneration: UInt64 = 0
    /// The last error published.
    var lastError: DefaultsError?
    private var handlers: [UInt64: Handler] = [:]
    /// Called when pending changes that had failed to be written finally land.
    private var recoveryHandlers: [UInt64: RecoveryHandler] = [:]
    private var lastToken: UInt64 = 0

    /// The problems that persist now.
    var current: [DefaultsError] { [fileError, writeError, watchError].compactMap { $0 } }

    // MARK: Handlers

    /// Adds an error handler; returns its token and the problems that persist now, to tell it at once.
    mutating func add(_ handler: @escaping Handler) -> (token: UInt64, current: [DefaultsError]) {
        lastToken += 1
        handlers[lastToken] = handler
        return (lastToken, current)
    }

    mutating func removeHandler(_ token: UInt64) {
        handlers[token] = nil
    }

    mutating func addRecoveryHandler(_ handler: @escaping RecoveryHandler) -> UInt64 {
        lastToken += 1
        recoveryHandlers[lastToken] = handler
        return lastToken
    }

    mutating func removeRecoveryHandler(_ token: UInt64) {
        recoveryHandlers[token] = nil
    }

    /// `error` is published now: it becomes the last error. Returns the handlers to tell.
    mutating func publishing(_ error: DefaultsError) -> [Handler] {
        lastError = error
        return Array(handlers.values)
    }

    /// The handlers to tell that a problem is over.
    var handlersToTell: [Handler] { Array(handlers.values) }

    // MARK: Slots

    /// A version of the file parsed: returns the file error it ends, if any.
    mutating func fileParsed() -> DefaultsError? {
        fileError.take()
    }

    /// A write failed with `error`; returns whether to publish it: a broken file was published when it was
    /// found, and the same write failure (same kind and `errno`; the details, such as which process holds
    /// the lock, may vary) is reported once, not at every retry.
    mutating func writeFailed(_ error: DefaultsError) -> Bool {
        if error == fileError { return false }
        defer { writeError = error }
        guard let known = writeError else { return true }
        return known.kind != error.kind || known.errorNumber != error.errorNumber
    }

    /// A write succeeded: returns the write error it ends, if any, with the recovery handlers to call.
    mutating func writeSucceeded() -> (error: DefaultsError, recoveryHandlers: [RecoveryHandler])? {
        guard let ended = writeError.take() else { return nil }
        return (ended, Array(recoveryHandlers.values))
    }

    /// The watch was lost with `error`; returns whether that is news (a new problem, from an update of the
    /// watcher no older than the last applied).
    mutating func watchLost(_ error: DefaultsError, generation: UInt64) -> Bool {
        guard generation >= watchGeneration else { return false }
        watchGeneration = generation
        defer { watchError = error }
        return watchError != error
    }

    /// The watch is back; returns the error it ends (none when a newer update of the watcher says not).
    mutating func watchRestored(generation: UInt64) -> DefaultsError? {
        guard generation >= watchGeneration else { return nil }
        watchGeneration = generation
        return watchError.take()
    }
}
