import Foundation

/// Change observers of a suite, and starting and stopping its file watch.
extension SuiteStorage {
    func addObserver(_ observer: SuiteObserver) -> UInt64 {
        let token = state.withLock { $0.observers.add(observer) }
        if observer.scope == .allProcesses && updateWatching() {
            reloadFromDisk()
            reloadLayers()
        }
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
                    || (state.errors.fileError != nil && state.memory.hasPendingChanges)
            }
            guard wanted != (token != nil) else { return false }
            if wanted {
                token = watcher.watch(file: fileURL.path) { [weak self] event in self?.handle(event) }
            } else if let watched = token.take() {
                watcher.unwatch(watched)
            }
            if !layerSources.isEmpty { watchLayers(wanted) }
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
}
