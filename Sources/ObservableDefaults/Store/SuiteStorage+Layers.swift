import Foundation
import Synchronization

/// The suite's layers other than its file: read when the suite opens, read again when a layer file changes
/// (while the suite is watched) or on ``reloadLayers()``, and what a change of one does to readers.
extension SuiteStorage {
    /// Reads every source when the storage opens (nobody observes yet: nothing to announce). A file that
    /// cannot be used is published, and its layer starts empty. Layer files are read through the process's
    /// ``LayerListings``: one known absent is not opened, one unchanged since a suite opened last is not
    /// read again.
    func loadLayers(fileIndex: Int) {
        let listings = LayerListings.shared
        if layerSources.contains(where: { if case .file = $0.kind { true } else { false } }) { listings.catchUp() }
        var sources: [SuiteLayers.Source] = []
        sources.reserveCapacity(layerSources.count)
        // Only what went wrong: a new channel has no problem for a clean read to end.
        var outcomes: [(Int, Result<[String: DefaultsError], DefaultsError>)] = []
        for (index, source) in layerSources.enumerated() {
            let (values, outcome) = source.initialValues(listings: listings)
            sources.append(values)
            if case .success(let problems) = outcome, problems.isEmpty { continue }
            outcomes.append((index, outcome))
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
        for (index, source) in layerSources.enumerated() { source.reload(gate: nil, into: [(self, index)]) }
    }

    /// What applying a read of a layer did to one suite: what to tell its error handlers, and which
    /// observers hear which keys (sent by ``tell(layer:)`` once no lock is held).
    struct LayerApplied {
        var delivery: ErrorDelivery
        var changed: Set<ExactKey>
        var observers: [SuiteObserver]

        func tell(layer: DefaultsOrigin) {
            delivery.send()
            if !changed.isEmpty {
                SuiteObservers.notify(observers, keys: changed, origin: .outside, layer: layer)
            }
        }
    }

    /// Applies what layer source `index` read: values that parse replace its last good ones, and the
    /// observers of the keys whose effective value changed are to be told; a read that failed is
    /// published (once per problem) and the layer keeps its last good values.
    func applyLayer(_ index: Int, _ read: Result<KeyPerFileDirectory.Contents, DefaultsError>) -> LayerApplied {
        let contents: KeyPerFileDirectory.Contents
        switch read {
        case .failure(let error):
            return LayerApplied(
                delivery: state.withLock { $0.errors.layerFailed(index, error) }, changed: [], observers: [])
        case .success(let read):
            contents = read
        }
        let values = contents.values
        return state.withLock { state in
            let delivery = state.errors.layerRead(index, problems: contents.problems)
            let keys = state.layers.differingKeys(source: index, values)
            guard !keys.isEmpty else { return LayerApplied(delivery: delivery, changed: [], observers: []) }
            let before = keys.map { state.layers.effective($0, file: state.memory[$0]) }
            state.layers.replace(source: index, with: values, keys: keys)
            layersMayShadow.store(state.layers.mayShadow, ordering: .releasing)
            var changed = Set<ExactKey>()
            for (key, old) in zip(keys, before) where state.layers.effective(key, file: state.memory[key]) != old {
                changed.insert(key)
            }
            return LayerApplied(
                delivery: delivery, changed: changed, observers: state.observers.hearing(anyOf: changed))
        }
    }

    /// Watches (`true`) or stops watching the layer sources; called with the suite's file watch, under its
    /// lock. A layer file is watched once for all the suites of the process watching it (``LayerWatch``).
    func watchLayers(_ wanted: Bool) {
        guard layersWatched.exchange(wanted, ordering: .acquiringAndReleasing) != wanted else { return }
        for (index, source) in layerSources.enumerated() {
            guard let key = source.watchKey else { continue }
            if wanted {
                LayerWatch.subscribe(self, index: index)
            } else {
                LayerWatch.unsubscribe(key, id: ObjectIdentifier(self), index: index)
            }
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
