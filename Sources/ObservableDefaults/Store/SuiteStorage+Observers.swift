import Foundation

/// Change observers and the error channel of a suite, and starting and stopping its file watch.
extension SuiteStorage {
    func addObserver(_ observer: SuiteObserver) -> UInt64 {
        let token = state.withLock { $0.observers.add(observer) }
        if observer.scope == .allProcesses && updateWatching() { reloadFromDisk() }
        return token
    }

    func removeObserver(_ token: UInt64) {
        let removed = state.withLock { $0.observers.remove(token) }
        removed?.isActive.clear()
        if removed?.scope == .allProcesses { _ = updateWatching() }
    }

    /// Watches the file while a cross-process observer exists, or while changes wait for a broken file to
    /// parse again (so they land as soon as a person fixes it), and stops when neither holds. The
    /// decision and the watcher call happen under one lock, so a first observer added while the last one
    /// is being removed on another thread cannot end up unwatched.
    /// - Returns: whether watching started.
    @discardableResult
    func updateWatching() -> Bool {
        watching.withLock { token -> Bool in
            let wanted = state.withLock { state in
                state.observers.hearsOtherProcesses
                    || (state.fileError != nil && state.memory.hasPendingChanges)
            }
            guard wanted != (token != nil) else { return false }
            if wanted {
                token = FileWatcher.shared.watch(file: fileURL.path) { [weak self] event in self?.handle(event) }
            } else if let watched = token.take() {
                FileWatcher.shared.unwatch(watched)
            }
            return wanted
        }
    }

    /// What the watcher says about the file: re-read it, or a watch lost, back, or restarted.
    private func handle(_ event: WatchEvent) {
        switch event {
        case .fileMayHaveChanged(let gate):
            fileMayHaveChanged(gate: gate)
        case .watchLost(var error, let generation):
            // Each suite hears about its directory under its own file's name.
            error.fileURL = fileURL
            raiseWatchError(error, generation: generation)
        case .watchRestored(let generation):
            clearWatchError(generation: generation)
        case .watcherFailed(var error):
            error.fileURL = fileURL
            report(error)
        }
    }

    /// Stops watching while `body` runs and starts again after, if it was watching (for tests: a change
    /// made meanwhile reaches no watch).
    func withWatchingSuspended(_ body: () throws -> Void) rethrows {
        let wasWatched = watching.withLock { token -> Bool in
            guard let watched = token.take() else { return false }
            FileWatcher.shared.unwatch(watched)
            return true
        }
        try body()
        if wasWatched { updateWatching() }
    }

    /// The registration with ``FileWatcher`` while the file is watched (for tests).
    var watchToken: WatchToken? { watching.withLock { $0 } }

    /// Adds an error handler and calls it at once with each problem that persists now (see
    /// ``currentErrors``), so an observer that comes late still hears why the suite is unhealthy.
    func addErrorHandler(_ handler: @escaping @Sendable (DefaultsErrorEvent) -> Void) -> UInt64 {
        let (token, current) = state.withLock { state in
            state.nextToken += 1
            state.errorHandlers[state.nextToken] = handler
            return (state.nextToken, Self.currentErrors(of: state))
        }
        for error in current { handler(.occurred(error)) }
        return token
    }

    /// The problems that persist now: the file does not parse, outside changes cannot be seen.
    var currentErrors: [DefaultsError] { state.withLock { Self.currentErrors(of: $0) } }

    private static func currentErrors(of state: State) -> [DefaultsError] {
        [state.fileError, state.writeError, state.watchError].compactMap { $0 }
    }

    /// Records and publishes why outside changes cannot be seen now (once per distinct problem).
    /// `generation` orders the watcher's updates: one older than the last applied is out of date.
    func raiseWatchError(_ error: DefaultsError, generation: UInt64) {
        let isNews = state.withLock { state -> Bool in
            guard generation >= state.watchGeneration else { return false }
            state.watchGeneration = generation
            defer { state.watchError = error }
            return state.watchError != error
        }
        if isNews { publish(error) }
    }

    /// The watch is back: outside changes are seen again (unless a newer update of the watcher says not).
    func clearWatchError(generation: UInt64) {
        let ended = state.withLock { state -> DefaultsError? in
            guard generation >= state.watchGeneration else { return nil }
            state.watchGeneration = generation
            defer { state.watchError = nil }
            return state.watchError
        }
        if let ended { publishRecovery(ended) }
    }

    func removeErrorHandler(_ token: UInt64) {
        _ = state.withLock { $0.errorHandlers.removeValue(forKey: token) }
    }

    /// Publishes an error on the error channel (and keeps file errors as ``fileError``).
    func report(_ error: DefaultsError) {
        publish(error)
    }

    func publish(_ error: DefaultsError) {
        let handlers = state.withLock { state in
            state.lastError = error
            return Array(state.errorHandlers.values)
        }
        for handler in handlers { handler(.occurred(error)) }
    }

    /// Publishes that the problem `error` described is over.
    func publishRecovery(_ error: DefaultsError) {
        for handler in state.withLock({ Array($0.errorHandlers.values) }) { handler(.recovered(error)) }
    }
}
