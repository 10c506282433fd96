/// A suite's error channel: an ``ErrorChannel`` whose problems are the suite's (the file does not parse,
/// pending changes cannot be written, outside changes cannot be seen), with the rules particular to a
/// suite: which update of the watcher is the latest, and who hears that failed writes finally landed.
///
/// Its methods return the ``ErrorDelivery`` to send; the storage sends it once its lock is released. Kept
/// under the storage's state lock with memory, so a merge that ends a file error does so in the same step
/// that makes the file's values readable.
struct SuiteErrorChannel {
    typealias RecoveryHandler = @Sendable () -> Void

    private var channel = ErrorChannel()
    /// The watcher update the watch problem comes from (see ``WatchEvent/watchLost(_:generation:)``).
    private var watchGeneration: UInt64 = 0
    /// Called when pending changes that had failed to be written finally land.
    private var recoveryHandlers: [UInt64: RecoveryHandler] = [:]
    private var lastRecoveryToken: UInt64 = 0

    /// Why the file's current version cannot be used (it does not parse, or cannot be read yet), until a
    /// version that can.
    var fileError: DefaultsError? { channel.problem(.suiteFile) }
    /// The failure keeping pending changes from the file (not a parse error; that is `fileError`),
    /// reported once; cleared when the changes land.
    var writeError: DefaultsError? { channel.problem(.suiteWrite) }
    /// The last error published.
    var lastError: DefaultsError? { channel.lastError }
    /// The problems that persist now.
    var current: [DefaultsError] { channel.current }

    // MARK: Handlers

    mutating func add(_ handler: @escaping ErrorChannel.Handler) -> (token: Int, delivery: ErrorDelivery) {
        channel.add(handler)
    }

    /// ``ErrorChannel/removeHandler(_:)``: the handler removed, to be released after the lock.
    mutating func removeHandler(_ token: Int) -> ErrorChannel.Handler? {
        channel.removeHandler(token)
    }

    mutating func addRecoveryHandler(_ handler: @escaping RecoveryHandler) -> UInt64 {
        lastRecoveryToken += 1
        recoveryHandlers[lastRecoveryToken] = handler
        return lastRecoveryToken
    }

    mutating func removeRecoveryHandler(_ token: UInt64) {
        recoveryHandlers[token] = nil
    }

    /// Publishes `error`, which ends no problem and starts none.
    mutating func publish(_ error: DefaultsError) -> ErrorDelivery {
        channel.publish(error)
    }

    // MARK: The file

    /// The file cannot be read, because of `error`: published if news.
    mutating func reportFileError(_ error: DefaultsError) -> ErrorDelivery {
        channel.report(error, topic: .suiteFile)
    }

    /// A version of the file that does not parse, because of `error`: kept without publishing (whether
    /// it is news is the file's to say: the same error in another version is).
    mutating func keepFileError(_ error: DefaultsError) {
        channel.keep(error, as: .suiteFile)
    }

    /// A version of the file parsed: says that the file error it ends, if any, is over; and that the file
    /// is empty (`blank`), with `emptyError` saying why, or that it is not empty any more.
    mutating func fileParsed(blank: Bool, emptyError: @autoclosure () -> DefaultsError) -> ErrorDelivery {
        var delivery = channel.clear(.suiteFile)
        delivery.append(blank ? channel.report(emptyError(), topic: .suiteEmpty) : channel.clear(.suiteEmpty))
        return delivery
    }

    // MARK: Other layers

    /// A file of layer source `index` cannot be used, because of `error`: published if news.
    mutating func layerFailed(_ index: Int, _ error: DefaultsError) -> ErrorDelivery {
        channel.report(error, topic: .layerFile(index: index))
    }

    /// Layer source `index` was read, passing over the key files `problems` (by name, with why): the
    /// problem of its file and those of key files not passed over any more are over; the others are
    /// published if news.
    mutating func layerRead(_ index: Int, problems: [String: DefaultsError]) -> ErrorDelivery {
        var delivery = channel.clear(.layerFile(index: index))
        delivery.append(
            channel.clear { topic in
                guard case .layerKeyFile(index, let name) = topic else { return false }
                return problems[name] == nil
            })
        for (name, error) in problems.sorted(by: { $0.key < $1.key }) {
            delivery.append(channel.report(error, topic: .layerKeyFile(index: index, name: name)))
        }
        return delivery
    }

    // MARK: Writes

    /// A write failed with `error`: published unless it is known (a broken file was published when it was
    /// found; the same write failure, same kind and `errno`, is reported once, not at every retry).
    mutating func writeFailed(_ error: DefaultsError) -> ErrorDelivery {
        guard error != fileError else {
            channel.keep(error, as: .suiteWrite)
            return ErrorDelivery()
        }
        return channel.report(error, topic: .suiteWrite)
    }

    /// A write succeeded: says that the write failure it ends, if any, is over, and returns the recovery
    /// handlers to call then.
    mutating func writeSucceeded() -> (delivery: ErrorDelivery, recoveryHandlers: [RecoveryHandler])? {
        let delivery = channel.clear(.suiteWrite)
        guard !delivery.events.isEmpty else { return nil }
        return (delivery, Array(recoveryHandlers.values))
    }

    // MARK: The watch

    /// The watch was lost with `error`: published if news, from an update of the watcher no older than
    /// the last applied.
    mutating func watchLost(_ error: DefaultsError, generation: UInt64) -> ErrorDelivery {
        guard generation >= watchGeneration else { return ErrorDelivery() }
        watchGeneration = generation
        return channel.report(error, topic: .suiteWatch)
    }

    /// The watch is back: says the watch problem is over (unless a newer update of the watcher says not).
    mutating func watchRestored(generation: UInt64) -> ErrorDelivery {
        guard generation >= watchGeneration else { return ErrorDelivery() }
        watchGeneration = generation
        return channel.clear(.suiteWatch)
    }
}
