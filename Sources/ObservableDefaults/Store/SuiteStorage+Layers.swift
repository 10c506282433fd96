import Foundation
import Synchronization

/// The suite's layers other than its file: read when the suite opens, read again when a layer file changes
/// (while the suite is watched) or on ``reloadLayers()``, and what a change of one does to readers.
extension SuiteStorage {
    /// Reads every source when the storage opens (nobody observes yet: nothing to announce). A file that
    /// cannot be used is published, and its layer starts empty. Layer files known absent
    /// (``LayerFileAbsence``) are not opened.
    func loadLayers(fileIndex: Int) {
        let absence = LayerFileAbsence.shared
        if layerSources.contains(where: { if case .file = $0.kind { true } else { false } }) { absence.catchUp() }
        var sources: [SuiteLayers.Source] = []
        sources.reserveCapacity(layerSources.count)
        // Only what went wrong: a new channel has no problem for a clean read to end.
        var outcomes: [(Int, Result<[String: DefaultsError], DefaultsError>)] = []
        for source in layerSources {
            let (values, outcome) = source.initialValues(absence: absence)
            sources.append(values)
            if case .success(let problems) = outcome, problems.isEmpty { continue }
            outcomes.append((source.index, outcome))
        }
        let deliveries = state.withLock { state in
            state.layers = SuiteLayers(sources: sources, fileIndex: fileIndex)
            layersMayShadow.store(state.layers.mayShadow, ordering: .releasing)
            return outcomes.map { index, outcome in
                switch outcome {
                case .success(let problems): state.errors.layerRead(index, problems: problems)
                case .failure(let error): state.errors.layerFailed(index, error)
                }
            }
        }
        for delivery in deliveries { delivery.send() }
    }

    /// Reads every layer file again and announces what changed.
    func reloadLayers() {
        for source in layerSources { reloadLayer(source, gate: nil) }
    }

    /// Reads `source` again; if it parses, its values replace the last good ones and the observers of the
    /// keys whose effective value changed are told, with the source as the change's layer. One that does not
    /// is published (once per problem) and the layer keeps its last good values. `gate`: see
    /// ``WatchEvent/ReadGate``.
    func reloadLayer(_ source: LayerSource, gate: WatchEvent.ReadGate?) {
        guard source.isLive else { return }
        let outcome = source.reading.withLock { _ -> (ErrorDelivery, Set<ExactKey>, [SuiteObserver])? in
            let contents: KeyPerFileDirectory.Contents
            do throws(DefaultsError) {
                contents = try source.read()
            } catch {
                if let gate, !gate(true) { return nil }
                return (state.withLock { $0.errors.layerFailed(source.index, error) }, [], [])
            }
            let values = contents.values
            if values.isEmpty || !contents.problems.isEmpty, let gate, !gate(true) { return nil }
            return state.withLock { state in
                let delivery = state.errors.layerRead(source.index, problems: contents.problems)
                let keys = state.layers.differingKeys(source: source.index, values)
                guard !keys.isEmpty else { return (delivery, [], []) }
                let before = keys.map { state.layers.effective($0, file: state.memory[$0]) }
                state.layers.replace(source: source.index, with: values, keys: keys)
                layersMayShadow.store(state.layers.mayShadow, ordering: .releasing)
                var changed = Set<ExactKey>()
                for (key, old) in zip(keys, before) where state.layers.effective(key, file: state.memory[key]) != old {
                    changed.insert(key)
                }
                return (delivery, changed, state.observers.hearing(anyOf: changed))
            }
        }
        guard let (delivery, changed, observers) = outcome else { return }
        delivery.send()
        if !changed.isEmpty {
            SuiteObservers.notify(observers, keys: changed, origin: .outside, layer: source.changeOrigin)
        }
    }

    /// Watches (`true`) or stops watching the layer files; called with the suite's file watch.
    func watchLayers(_ wanted: Bool) {
        let stale = layerWatches.withLock { tokens -> [WatchToken] in
            let stale = tokens
            tokens = []
            guard wanted else { return stale }
            for source in layerSources {
                for path in source.watchedPaths {
                    tokens.append(
                        watcher.watch(file: path) { [weak self, weak source] event in
                            guard let self, let source else { return }
                            self.handleLayer(event, source)
                        })
                }
            }
            return stale
        }
        for token in stale { watcher.unwatch(token) }
        let observations = layerObservations.withLock { observations -> [DefaultsObservation] in
            let stale = observations
            observations = []
            guard wanted else { return stale }
            for source in layerSources {
                guard case .cloud(let store, let prefix) = source.kind else { continue }
                observations.append(
                    store.observe(prefix: prefix.isEmpty ? nil : prefix, scope: .allProcesses) {
                        [weak self, weak source] _ in
                        guard let self, let source else { return }
                        self.reloadLayer(source, gate: nil)
                    })
            }
            return stale
        }
        for observation in observations { observation.cancel() }
    }

    /// What the watcher says about a layer file. A layer directory that does not exist is normal (no
    /// administrator file, no system file), so a lost watch is not an error; the file is read when it is back.
    private func handleLayer(_ event: WatchEvent, _ source: LayerSource) {
        switch event {
        case .fileMayHaveChanged(let gate): reloadLayer(source, gate: gate)
        case .watchRestored, .watcherFailed: reloadLayer(source, gate: nil)
        case .watchLost: return
        }
    }

    // MARK: Reading

    /// Where the effective value of `key` comes from, `nil` when no layer has it and it has no registered
    /// default.
    func origin(forKey key: String) -> DefaultsOrigin? {
        let key = ExactKey(key)
        return state.withLock { state in
            if let entry = state.layers.entryAbove(key) { return entry.origin }
            if state.memory[key] != nil { return .file(fileURL) }
            if let entry = state.layers.entryBelow(key) { return entry.origin }
            return state.registered[key] != nil ? .registered : nil
        }
    }

    /// The entry of the layer above the file that hides the file's value of `key`, if any.
    func shadowingEntry(_ key: String) -> LayerEntry? {
        guard layersMayShadow.load(ordering: .acquiring) else { return nil }
        let key = ExactKey(key)
        return state.withLock { $0.layers.entryAbove(key) }
    }

    /// Whether the managed layer forces `key`.
    func isForced(_ key: String) -> Bool { forcedEntry(key) != nil }

    /// The managed entry forcing `key`, if any.
    func forcedEntry(_ key: String) -> LayerEntry? {
        let key = ExactKey(key)
        return state.withLock { $0.layers.forced(key) }
    }

    /// The error a write to a forced key is reported with.
    func forcedKeyError(_ key: ExactKey, _ forced: LayerEntry) -> DefaultsError {
        DefaultsError(
            .forcedKey,
            message: "not written: the key is forced by an administrator (\(forced.origin)); the suite's file is "
                + "unchanged and the key keeps its forced value", fileURL: fileURL, key: key.string)
    }
}
