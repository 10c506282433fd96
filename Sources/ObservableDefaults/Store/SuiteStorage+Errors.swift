/// The suite's error channel (``SuiteErrorChannel``): what persists, publishing errors and recoveries,
/// and who hears them. Handlers are called with no lock held.
extension SuiteStorage {
    var fileError: DefaultsError? { state.withLock { $0.errors.fileError } }
    var writeError: DefaultsError? { state.withLock { $0.errors.writeError } }
    var lastError: DefaultsError? { state.withLock { $0.errors.lastError } }

    /// The problems that persist now: the file does not parse, pending changes cannot be written, outside
    /// changes cannot be seen.
    var currentErrors: [DefaultsError] { state.withLock { $0.errors.current } }

    /// Adds an error handler and calls it at once with each problem that persists now (see
    /// ``currentErrors``) and each error published before anyone listened, so an observer that comes late
    /// still hears why the suite is unhealthy.
    func addErrorHandler(_ handler: @escaping ErrorChannel.Handler) -> Int {
        let (token, delivery) = state.withLock { $0.errors.add(handler) }
        delivery.send()
        return token
    }

    func removeErrorHandler(_ token: Int) {
        // Released after the lock: the handler may hold the last reference to the suite.
        let removed = state.withLock { $0.errors.removeHandler(token) }
        withExtendedLifetime(removed) {}
    }

    /// Adds a handler called when pending changes that had failed to be written finally land.
    func addRecoveryHandler(_ handler: @escaping SuiteErrorChannel.RecoveryHandler) -> UInt64 {
        state.withLock { $0.errors.addRecoveryHandler(handler) }
    }

    func removeRecoveryHandler(_ token: UInt64) {
        state.withLock { $0.errors.removeRecoveryHandler(token) }
    }

    /// Publishes an error on the error channel.
    func report(_ error: DefaultsError) {
        state.withLock { $0.errors.publish(error) }.send()
    }

    /// Records and publishes why outside changes cannot be seen now (once per distinct problem).
    /// `generation` orders the watcher's updates: one older than the last applied is out of date.
    func raiseWatchError(_ error: DefaultsError, generation: UInt64) {
        state.withLock { $0.errors.watchLost(error, generation: generation) }.send()
    }

    /// The watch is back: outside changes are seen again (unless a newer update of the watcher says not).
    func clearWatchError(generation: UInt64) {
        state.withLock { $0.errors.watchRestored(generation: generation) }.send()
    }
}
