import Foundation

/// The shared heart of a ``CloudKeyValueStore``: its state under one lock, its local copy, its change
/// observers and error channel. The sync engine and the public API both work through it.
final class CloudStoreCore: Sendable {
    struct Observer: Sendable, KeyFilteredObserver {
        var filter: DefaultsKeyFilter
        var handler: @Sendable (CloudChange) -> Void
        /// Also hears this process's writes through the store (``announceLocalWrite(_:skipping:)``): the
        /// channel of `@ObservableCloud` objects and of observers of a ``DefaultsObservationScope``. The
        /// iCloud-shaped public observers hear changes from elsewhere only.
        var hearsLocalWrites = false
        /// Hears changes from elsewhere (``announce(_:reason:deliveredByCaller:)``); `false` for an observer of
        /// this process's writes only.
        var hearsOutsideChanges = true
    }

    private struct Listeners: Sendable {
        var observers = ObserverRegistry<Int, Observer>()
        var errors = ErrorChannel()
        var nextToken = 0
    }

    let state: Locked<CloudState>
    /// The local copies of the store: this process's and those of other processes running it.
    let share: CloudLocalCopyShare?
    /// This process's local copy.
    var localCopy: CloudLocalCopy? { share?.own }
    /// Writes ``localCopy`` in the background (`nil` without a local copy).
    private let saver: CloudLocalCopySaver?
    let limits: CloudLimits
    /// Called with each write this process makes through the store, after memory has it (the store of the
    /// Apple library's test mode copies them into a suite; see `UpstreamTestSeam.swift`).
    let writeMirror: (@Sendable (String, DefaultsValue?) -> Void)?
    /// Set by the store once it exists: the `object` of posted notifications.
    let notificationSender = LockedCallback<CloudChange>()
    /// Set by a syncing store: wakes its upload (unsent writes came back with a late-read local copy).
    let uploadWanted = LockedCallback<Void>()
    private let listeners = Locked(Listeners())
    /// The fallback values of ``CloudKeyValueStore/register(defaults:)-([String:DefaultsValue])``: memory only, never uploaded.
    private let registered = Locked([String: DefaultsValue]())
    /// Events and errors, delivered in order (see ``CloudDeliveries``).
    private let deliveries = CloudDeliveries()

    /// `confirmsWrites`: a server confirms each local write (an etcd store), which brings the whole save
    /// that follows its journal record (see ``CloudLocalCopySaver``).
    init(
        state: CloudState, localCopy share: CloudLocalCopyShare?, limits: CloudLimits, confirmsWrites: Bool,
        writeMirror: (@Sendable (String, DefaultsValue?) -> Void)? = nil
    ) {
        let locked = Locked(state)
        self.state = locked
        self.share = share
        self.limits = limits
        self.writeMirror = writeMirror
        saver = share.map { CloudLocalCopySaver(share: $0, state: locked, wholeSaveAfterRecords: !confirmsWrites) }
        saver?.onSave { [weak self] error in
            if let error { self?.report(error, topic: .localCopySave) } else { self?.clear(.localCopySave) }
        }
        saver?.onLateLoad { [weak self] late in self?.takeIn(late) }
    }

    // MARK: Registered defaults

    /// The registered default of `key`.
    func registeredDefault(forKey key: String) -> DefaultsValue? { registered.withLock { $0[key] } }

    /// Every registered default.
    var registeredDefaults: [String: DefaultsValue] { registered.withLock { $0 } }

    /// Adds fallback values; the keys whose readable value changed (no value stored, a new default) are
    /// announced as this process's writes are (to `@ObservableCloud` objects, not to the public observers of
    /// changes from elsewhere).
    func register(_ defaults: [String: DefaultsValue]) {
        state.withLock { state in
            let changed = registered.withLock { registered in
                var changed: [String] = []
                for (key, value) in defaults {
                    let normalized = JSONRepresentation.normalize(value)
                    if state.values[key] == nil && registered[key] != normalized { changed.append(key) }
                    registered[key] = normalized
                }
                return changed
            }
            for key in changed { announceLocalWrite(key, skipping: nil) }
        }
    }

    // MARK: Changes

    func addObserver(_ observer: Observer) -> Int {
        listeners.withLock { listeners in
            listeners.nextToken += 1
            listeners.observers.insert(observer, for: listeners.nextToken)
            return listeners.nextToken
        }
    }

    /// Removes the observer of `token`. It is released after the lock: its handler may hold the last reference
    /// to the store, whose deinit (saving the local copy) takes the lock.
    func removeObserver(_ token: Int) {
        let removed = listeners.withLock { $0.observers.remove(token) }
        withExtendedLifetime(removed) {}
    }

    /// Tells observers (and `NotificationCenter`) about `keys`, unless empty. With `deliveredByCaller`,
    /// the caller runs the delivery itself after releasing the state lock (see ``change(deliverHere:_:)``).
    func announce(_ keys: Set<String>, reason: CloudChangeReason, deliveredByCaller: Bool = false) {
        guard !keys.isEmpty else { return }
        let change = CloudChange(keys: keys, reason: reason)
        // One key (a watch event's usual change): the same observers hear `change` itself, found and matched
        // without sets of keys.
        if keys.count == 1, let first = keys.first {
            let key = ExactKey(first)
            return deliver(change, deliveredByCaller: deliveredByCaller) { observers, hear in
                observers.forEach(hearing: key, hear)
            } share: { observer in
                observer.filter.matches(key) ? change : nil
            }
        }
        let exactKeys = Set(keys.map { ExactKey($0) })
        deliver(change, deliveredByCaller: deliveredByCaller) { observers, hear in
            observers.forEach(hearingAnyOf: exactKeys, hear)
        } share: { observer in
            let relevant = observer.filter.matching(exactKeys)
            return relevant.isEmpty ? nil : CloudChange(keys: relevant, reason: reason)
        }
    }

    /// Delivers `change` to the observers of outside changes that `hearers` visits, each the part of it that
    /// `share` gives that observer (`nil`: none), then posts it to `NotificationCenter`. Observers registered
    /// now hear it (not ones added before it is delivered), unless cancelled by then.
    private func deliver(
        _ change: CloudChange, deliveredByCaller: Bool,
        hearers: (ObserverRegistry<Int, Observer>, (Int, Observer) -> Void) -> Void,
        share: @escaping @Sendable (Observer) -> CloudChange?
    ) {
        let tokens = listeners.withLock { listeners in
            var tokens: [Int] = []
            hearers(listeners.observers) { token, observer in
                if observer.hearsOutsideChanges { tokens.append(token) }
            }
            return tokens
        }
        deliveries.add(deliveredByCaller: deliveredByCaller) { [self] in
            for token in tokens {
                guard let observer = listeners.withLock({ $0.observers[token] }), let shared = share(observer)
                else { continue }
                observer.handler(shared)
            }
            notificationSender.current?(change)
        }
    }

    /// Tells the observers that hear local writes, except `skipping` (the writing object's own), that this
    /// process wrote `key` through the store. Called under the state lock, so the announcement is ordered
    /// with the change. Nothing is posted to `NotificationCenter` (iCloud announces outside changes only).
    func announceLocalWrite(_ key: String, skipping: Int?) {
        let exactKey = ExactKey(key)
        let tokens = listeners.withLock { listeners in
            var tokens: [Int] = []
            listeners.observers.forEach(hearing: exactKey, except: skipping) { token, observer in
                if observer.hearsLocalWrites { tokens.append(token) }
            }
            return tokens
        }
        guard !tokens.isEmpty else { return }
        let keys: Set<ExactKey> = [exactKey]
        deliveries.add { [self] in
            for token in tokens {
                guard let observer = listeners.withLock({ $0.observers[token] }) else { continue }
                let relevant = observer.filter.matching(keys)
                if !relevant.isEmpty { observer.handler(CloudChange(keys: relevant, reason: .serverChange)) }
            }
        }
    }

    /// Changes the state and announces the keys `body` returns under the same lock, so an observer hears a
    /// change exactly when it was registered before the change became readable. With `deliverHere`, the
    /// calling thread delivers the change itself once the lock is released, unless deliveries are under
    /// way elsewhere (they take it, in order): the watch's path, which would otherwise wait for a hand-off.
    func change(deliverHere: Bool = false, _ body: (inout CloudState) -> (keys: Set<String>, reason: CloudChangeReason))
    {
        state.withLock { state in
            let (keys, reason) = body(&state)
            announce(keys, reason: reason, deliveredByCaller: deliverHere)
        }
        if deliverHere { deliveries.deliverWaiting() }
    }

    /// How many times the thread that found a change delivered it itself, without a hand-off.
    var deliveriesRunByFinders: Int { deliveries.runByCallers.withLock { $0 } }

    /// Waits until every event announced so far has been delivered (at once when called from a delivery).
    func waitForDeliveries() { deliveries.waitForAll() }

    // MARK: Updates

    /// Applies an update step in this process's memory (a store that does not sync, an etcd store offline
    /// or in a batch): runs it on memory's value outside the lock and stores the result unless the key
    /// changed meanwhile (then runs it again); a syncing store keeps the step with the key's pending write,
    /// to run again on the server's value at upload. Announced to this process's objects, except
    /// `skipping`, as a write is; recorded in the local copy. Returns the value stored.
    /// - Throws: the step's error, or a ``DefaultsError`` when the result is past ``limits`` (then also
    ///   announced as a quota violation); nothing changed then.
    func applyUpdateLocally(_ key: String, _ step: CloudUpdateStep, skipping: Int?, syncs: Bool) throws
        -> DefaultsValue?
    {
        enum Outcome { case retry, refused(String), unchanged, written }
        while true {
            let (current, generation) = state.withLock { ($0.values[key], $0.pending[key]?.generation) }
            let value = try step.transform(current)
            let text = value.map(CloudValueText.encode)
            let outcome = state.withLock { state -> Outcome in
                guard state.values[key] == current, state.pending[key]?.generation == generation else { return .retry }
                if value != nil,
                    let why = limits.violation(
                        key: key, valueBytes: text?.count, sizes: state.sizes, totalBytes: state.totalBytes)
                {
                    return .refused(why)
                }
                let changed = state.applyLocalStep(step, value: value, text: text, forKey: key, syncs: syncs)
                guard changed else { return .unchanged }
                if state.localCopyUnread { state.writtenBeforeCopyRead.insert(key) }
                announceLocalWrite(key, skipping: skipping)
                return .written
            }
            switch outcome {
            case .retry: continue
            case .refused(let why): throw overLimits(key, why)
            case .unchanged: return value
            case .written:
                writeMirror?(key, value)
                saveLocalCopy(.localWrite(key))
                return value
            }
        }
    }

    /// The error of an update whose result is past ``limits``; the key is announced as a quota violation.
    func overLimits(_ key: String, _ why: String) -> DefaultsError {
        announce([key], reason: .quotaViolation)
        return overLimitsError(key, why)
    }

    /// The error of a value for `key` past ``limits`` (`why` says which), which is not stored.
    func overLimitsError(_ key: String, _ why: String) -> DefaultsError {
        DefaultsError(.unsupportedValue, message: "over the cloud store's limits, not stored: \(why)", key: key)
    }

    // MARK: Errors

    /// Adds an error handler and calls it at once with each problem that persists now and each error
    /// published before anyone listened.
    func addErrorHandler(_ handler: @escaping ErrorChannel.Handler) -> Int {
        let (token, delivery) = listeners.withLock { $0.errors.add(handler) }
        delivery.send()
        return token
    }

    /// Removes the error handler of `token`, released after the lock (see ``removeObserver(_:)``).
    func removeErrorHandler(_ token: Int) {
        let removed = listeners.withLock { $0.errors.removeHandler(token) }
        withExtendedLifetime(removed) {}
    }

    var currentErrors: [DefaultsError] { listeners.withLock { $0.errors.current } }

    /// Publishes `error`; with a `topic`, it also stays in ``currentErrors`` until ``clear(_:)``: while it
    /// lasts, a later error of the same topic replaces it there without being published (one outage is one
    /// error), and its end is published as ``DefaultsErrorEvent/recovered(_:)``.
    func report(_ error: DefaultsError, topic: ErrorTopic? = nil) {
        deliver(listeners.withLock { $0.errors.report(error, topic: topic) })
    }

    /// Ends the problem of `topic`, if there is one, and publishes that it is over.
    func clear(_ topic: ErrorTopic) { deliver(listeners.withLock { $0.errors.clear(topic) }) }

    /// Ends every problem whose topic `isOver` says is over, and publishes that each is over.
    func clear(where isOver: (ErrorTopic) -> Bool) {
        deliver(listeners.withLock { $0.errors.clear(where: isOver) })
    }

    /// Sends `delivery` in order with the store's other events.
    private func deliver(_ delivery: ErrorDelivery) {
        guard !delivery.isEmpty else { return }
        deliveries.add { delivery.send() }
    }

    // MARK: Local copy

    /// Writes `change` to the local copy, as the saver decides (see ``CloudLocalCopySaver/Change``), without
    /// blocking the caller; a failure goes to the error channel. Nothing without a local copy.
    func saveLocalCopy(_ change: CloudLocalCopySaver.Change) { saver?.save(change) }

    /// Puts every local write made so far on disk and waits until it is; with `stopping`, writes a whole
    /// save of everything outstanding first, then ends writing.
    func flushLocalCopy(stopping: Bool = false) {
        guard stopping else { return saver?.flush() ?? () }
        saver?.flushAll()
        share?.stopWriting()
    }

    /// Whether the local copy's entry of `key` may be a pending write made while the key was absent (see
    /// ``CloudLocalCopySaver/mayHoldPendingCreate(of:)``); false without a local copy.
    func localCopyMayHoldPendingCreate(of key: String) -> Bool { saver?.mayHoldPendingCreate(of: key) ?? false }

    /// Puts on disk the local writes whose save a thread took over and the server has not confirmed (see
    /// ``CloudLocalCopySaver/flushUnconfirmed()``), and waits until they are.
    func flushUnconfirmedWrites() { saver?.flushUnconfirmed() }

    /// Takes in the server's confirmation of `write` of `key` at `revision` (``CloudState/confirmUpload(_:forKey:revision:)``);
    /// the local copy takes it in with its next whole save, and skips the write's record if not written yet.
    func confirmUpload(_ write: PendingWrite, forKey key: String, revision: Int64) {
        let settled = state.withLock { state -> Bool in
            state.confirmUpload(write, forKey: key, revision: revision)
            guard state.pending[key] == nil else { return false }
            // Under the state's lock: a newer write of the key, noted once it is in the state, keeps its record.
            saver?.save(.uploadConfirmed(key))
            return true
        }
        if !settled { saveLocalCopy(.wholeStateEventually) }
    }

    /// Starts reading the local copy again until it is read, when it could not be read at start for a
    /// reason that may pass (``CloudLocalCopy/awaitsLoad``); `problem` says why, until then.
    func loadLocalCopyLater(_ problem: DefaultsError) {
        report(problem, topic: .localCopyUnread)
        saveLocalCopy(.wholeStateEventually)  // its delayed step reads the copy again
    }

    /// Reads the local copy now, when it could not be read at start and can be by now (taking it in), so
    /// that the first read of the namespace reconciles it as it does a copy read at start: writes made
    /// meanwhile are then based on the revisions the copy knew. Called by the sync thread with the first
    /// read's answer, before taking it in.
    func readLocalCopyIfUnread() {
        if state.withLock({ $0.localCopyUnread }) { saver?.flush() }
    }

    /// Takes in a local copy read after start (see ``CloudState/takeInLateCopy(_:)``):
    /// the keys it changes are announced as an initial sync; or notes one more failed attempt.
    private func takeIn(_ late: CloudLateLoad) {
        guard late.read else {
            if let problem = late.problems.last { report(problem, topic: .localCopyUnread) }
            return
        }
        clear(.localCopyUnread)
        for (index, problem) in late.problems.enumerated() {
            report(problem, topic: .localCopyFinding(.late, index: index))
        }
        guard let copy = late.state else { return }
        var outcome = LateCopyOutcome()
        change { state in
            outcome = state.takeInLateCopy(copy)
            return (outcome.changed, .initialSync)
        }
        reportDroppedWrites(
            outcome.dropped,
            because:
                "the local copy it was kept in, read late, came from another account (cluster, namespace or user) than the server's"
        )
        if outcome.restoredWrites { uploadWanted.current?(()) }
    }

    /// Takes in the local copies of processes that ran this store and ended since it started (see
    /// ``CloudLocalCopyShare``): their unsent writes are uploaded, the keys they change announced as an
    /// initial sync, and their files removed after the next whole save. Called when the cluster is back.
    func adoptOrphanedCopies() {
        guard let share else { return }
        var problems: [DefaultsError] = []
        let orphans = share.adoptOrphans { problems.append($0) }
        for (index, problem) in problems.enumerated() {
            report(problem, topic: .localCopyFinding(.ofEndedProcess, index: index))
        }
        guard !orphans.isEmpty else { return }
        var dropped: [String] = []
        var restored = false
        change { state in
            var changed = Set<String>()
            for orphan in orphans {
                let outcome = state.takeIn(sibling: orphan, adoptingWrites: true)
                changed.formUnion(outcome.changed)
                dropped += outcome.dropped
                restored = restored || outcome.restoredWrites
            }
            return (changed, .initialSync)
        }
        for key in dropped { report(CloudLocalCopyShare.droppedError(key)) }
        saveLocalCopy(.wholeStateNow)
        if restored { uploadWanted.current?(()) }
    }

    /// Reports each of `keys`' unsent writes as dropped, saying `why` (another account's writes).
    func reportDroppedWrites(_ keys: [String], because why: String) {
        for key in keys { report(DefaultsError(.cloud, message: "the unsent write was dropped: \(why)", key: key)) }
    }
}
