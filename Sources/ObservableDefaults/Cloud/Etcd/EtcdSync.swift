import Foundation

/// Keeps a cloud store's state in sync with an etcd namespace on its own thread: the first load (initial
/// sync or account change), uploads of pending writes as compare-and-swap, a watch that resumes from the
/// last seen revision, re-reads after compaction, probes that find a hung member, fail-over, and re-reads
/// as an account change when any answer comes from a re-created cluster (``EtcdClusterCheck``).
final class EtcdSync: Sendable {
    let client: EtcdClient
    let core: CloudStoreCore
    let control = EtcdSyncControl()
    private let watch = Locked<EtcdWatchStream?>(nil)
    /// `update(forKey:_:)` requests waiting for this thread, and whether the store is offline now.
    let updateRequests = Locked(CloudUpdateRequests())
    /// Update transactions: the marker's lease, the attempt whose answer was lost, batch splits.
    let updateBookkeeping: Locked<EtcdUpdateBookkeeping>
    /// Names this store's update marker (see `EtcdSync+Updates.swift`).
    let writerID = String(UInt64.random(in: 1 ... .max), radix: 16)

    init(client: EtcdClient, core: CloudStoreCore) {
        self.client = client
        self.core = core
        updateBookkeeping = Locked(EtcdUpdateBookkeeping(operationLimit: client.configuration.maxTransactionOperations))
        // A member a request moved on from (too slow, a broken answer) is reported even when the next answers.
        client.passedOver.set { [weak core] error in core?.report(error, topic: .connection) }
    }

    var configuration: EtcdConfiguration { client.configuration }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ObservableDefaults.EtcdSync"
        thread.start()
    }

    func stop() {
        control.stop()
        watch.withLock { $0 }?.cancel()
    }

    /// Uploads now and waits for the server (at most `timeout`); whether everything is on the server.
    /// Returns `false` early when every member refuses connections (see ``EtcdSyncControl/requestRound(timeout:)``).
    func synchronize(timeout: TimeInterval) -> Bool {
        control.requestRound(timeout: timeout) && core.state.withLock { $0.pending.isEmpty }
    }

    // MARK: The loop

    private func run() {
        var phase = EtcdSyncPhase()
        while !control.isStopped {
            let round = control.beginRound()
            do {
                if client.cluster.foundAnotherCluster { phase.needs(.read) }
                switch phase.opening {
                case .firstRead, .read:
                    let reason = try readNamespace(first: phase.opening == .firstRead)
                    if reason == .accountChange { endWatch() }  // it watched the old cluster
                case .check:
                    try client.status(whileWaiting: saveTakenWrite)
                case .nothing:
                    break
                }
                phase.opened()
                try resolveUnansweredUpdate()
                try serveUpdateRequests()
                try uploadPending()
                if watch.withLock({ $0 }) == nil { startWatch() }
                updateRequests.withLock { $0.offline = false }
                control.completeRound(round, .succeeded)
                core.clear(.connection)
                if phase.succeeded() {
                    // Processes sharing the local copy may have ended meanwhile with writes the cluster
                    // never got: they are this store's to upload now.
                    core.adoptOrphanedCopies()
                }
                saveTakenWrite()  // what it took and no slow answer saved (a round without a request too)
                control.waitForWake(timeout: configuration.probeInterval)
                takeWatchEnds(into: &phase)
                probeWatchedMember(&phase)
            } catch {
                endWatch()
                phase.needs(.check)
                if client.cluster.refused(with: error) {
                    core.report(error, topic: .account)
                    continue  // the next round reads the new cluster at once
                }
                core.report(error, topic: .connection)
                let pause = phase.failed()
                // offline: updates apply here at once until a round succeeds
                applyUpdateRequestsLocally(closing: false)
                control.completeRound(round, EtcdClient.isRefusedEverywhere(error) ? .refused : .failed)
                saveTakenWrite()
                control.sleep(pause, after: round)
            }
        }
        applyUpdateRequestsLocally(closing: true)
        saveTakenWrite()
        endWatch()
    }

    /// Takes the ends of the watch that came while the thread waited, noting what the next round needs.
    private func takeWatchEnds(into phase: inout EtcdSyncPhase) {
        let ends = control.takeWatchEnds()
        if !ends.isEmpty { watch.withLock { $0 = nil } }
        for end in ends {
            switch end {
            case .compacted:
                phase.needs(.read)
            case .protocolViolation(let error), .tooLarge(let error):
                // The watch cannot be followed past that message (watching from the same revision would
                // meet it again): read the namespace instead, as after compaction.
                phase.needs(.read)
                core.report(error, topic: .connection)
            case .failed(let error):
                phase.needs(.check)
                core.report(error, topic: client.cluster.refused(with: error) ? .account : .connection)
            case .interrupted:
                phase.needs(.check)
            case .cancelled:
                break
            }
        }
    }

    /// Every probe interval, makes sure the watched member answers; one that does not (hung, cut off) is
    /// left for another.
    private func probeWatchedMember(_ phase: inout EtcdSyncPhase) {
        guard ContinuousClock.now - phase.lastProbe >= .seconds(configuration.probeInterval),
            let current = watch.withLock({ $0 })
        else {
            return
        }
        phase.lastProbe = ContinuousClock.now
        if !client.isResponsive(
            current.endpoint, timeout: min(1, configuration.probeInterval), whileWaiting: saveTakenWrite)
        {
            core.report(
                DefaultsError(
                    .cloud,
                    message:
                        "etcd member \(current.endpoint.absoluteString) does not answer (hung or cut off); watching another member"
                ),
                topic: .connection)
            client.failOver(from: current.endpoint)
            endWatch()
        }
    }

    // MARK: A local write's save

    /// Wakes the sync thread for this process's write of `key`, which also has to reach the local copy.
    /// A thread waiting for work takes that save too (``EtcdSyncControl/wakeTakingSave()``), so a write wakes
    /// one thread instead of two: it appends the write's record once a request of its round is late
    /// (``saveTakenWrite()``), or after the round, unless the server confirmed the write by then (it needs
    /// no record: the next whole save takes it in); otherwise the saver appends it at once.
    /// `cuttingBackOff` also ends a back-off under way (``EtcdSyncControl/wakeNow()``).
    func wake(forWriteOf key: String, cuttingBackOff: Bool = false) {
        core.saveLocalCopy(.localWriteFlushedByCaller(key))
        if !control.wakeTakingSave(cuttingBackOff: cuttingBackOff) { core.saveLocalCopy(.localWrite(key)) }
    }

    /// Does the local-copy save ``wake(forWriteOf:)`` handed over, if it is still to do: passed to each request
    /// to overlap with a slow answer, and done after the round otherwise, when the writes the server
    /// confirmed meanwhile need no record (``CloudStoreCore/confirmUpload(_:forKey:revision:)``).
    func saveTakenWrite() {
        if control.takeSave() { core.flushUnconfirmedWrites() }
    }

    private func endWatch() {
        let current = watch.withLock { watch in
            defer { watch = nil }
            return watch
        }
        current?.cancel()
        _ = control.takeWatchEnds()
    }

    // MARK: Reading

    /// Reads the whole namespace and takes it in: at the first load, differences are an initial sync; later
    /// (after compaction), server changes; and whenever the state came from another cluster, namespace or
    /// user (the local copy's at the first load; a cluster re-created under a running store), an account
    /// change: the old account's unsent writes are dropped and reported, its revisions forgotten. Returns
    /// the reason the differences were announced with.
    @discardableResult
    private func readNamespace(first: Bool) throws(DefaultsError) -> CloudChangeReason {
        let (header, pairs) = try client.readNamespace(whileWaiting: saveTakenWrite)
        // The server answered, so descriptors are to be had again: a local copy that could not be read at
        // start is taken in first, and this read reconciles it as it does a copy read at start.
        if first { core.readLocalCopyIfUnread() }
        var server: [String: (value: DefaultsValue, revision: Int64, text: Data?)] = [:]
        var undecodable = Set<String>()
        for pair in pairs where !CloudKeyValueStore.isReserved(pair.key) {
            guard let value = decode(pair) else { undecodable.insert(pair.key); continue }
            server[pair.key] = (value, pair.modRevision, pair.value)
        }
        let account = CloudAccount(
            clusterID: header.clusterID, namespace: configuration.namespace, user: configuration.user ?? "")
        var dropped: [String] = []
        var reason: CloudChangeReason = first ? .initialSync : .serverChange
        core.change { state in
            if let previous = state.account, previous != account {
                reason = .accountChange
                dropped = state.pending.keys.sorted()
                state.pending = [:]
                state.inFlight = [:]
                state.knownRevisions = [:]
                state.lastRevision = 0
            }
            state.account = account
            return (state.applySnapshot(server, at: header.revision, undecodable: undecodable), reason)
        }
        client.cluster.expect(header.clusterID)
        core.clear(.account)
        // A value reported as undecodable that is gone now (deleted, or replaced by one that decodes) is no
        // problem any more.
        core.clear { topic in
            guard case .undecodableValue(let key) = topic else { return false }
            return !undecodable.contains(key)
        }
        core.reportDroppedWrites(
            dropped,
            because:
                "it was made on another account (cluster, namespace or user) than etcd's at \(client.currentEndpoint.absoluteString) now"
        )
        reportLostUpdates()
        core.saveLocalCopy(.wholeStateNow)
        return reason
    }

    /// The value of a server pair, or `nil` (reported on the error channel) when its text does not decode.
    func decode(_ pair: EtcdKeyValue) -> DefaultsValue? {
        do {
            let value = try CloudValueText.decode(pair.value ?? Data(), key: pair.key)
            core.clear(.undecodableValue(key: pair.key))
            return value
        } catch {
            var error = error
            error.message += " (etcd key \(configuration.keyPrefix + pair.key)); the local value is kept"
            core.report(error, topic: .undecodableValue(key: pair.key))
            return nil
        }
    }

    // MARK: Uploading

    private func uploadPending() throws(DefaultsError) {
        while !control.isStopped {
            let next = core.state.withLock { state -> (String, PendingWrite, unanswered: PendingWrite?)? in
                let open = state.openBatch
                // A batch still open waits; the others go in the order they were written.
                guard
                    let (key, write) = state.pending.lazy.filter({ open == nil || $0.value.batch != open })
                        .min(by: { $0.value.generation < $1.value.generation })
                else { return nil }
                let unanswered = state.inFlight[key]
                if write.batch == nil, !write.hasSteps { state.inFlight[key] = write }
                return (key, write, unanswered)
            }
            guard let (key, write, unanswered) = next else { return }
            if write.batch != nil || write.hasSteps {
                // One transaction for the batch, or update steps to run again on the server's value.
                try uploadGroup(of: key)
                continue
            }
            // A key whose entry on disk may be an older pending write that created it gets this one on disk
            // before it is sent: its record skipped after a quick answer, a store restarted after a crash
            // would upload the older write again, creating the key anew after a deletion.
            if core.localCopyMayHoldPendingCreate(of: key) { saveTakenWrite() }
            var result: EtcdClient.SwapResult
            // A failed upload stays in `inFlight`: its outcome is unknown (the member may have carried it out
            // before the connection broke), so its echo and its value are still recognised as this store's.
            result = try client.compareAndSwap(
                key: key, value: write.text, expected: write.baseRevision, whileWaiting: saveTakenWrite)
            var confirmed = write
            if case .conflict(let current, let revision) = result,
                let own = [write, unanswered].compactMap({ $0 }).first(where: { isOwnRepeat($0, current) })
            {
                // The comparison failed on this store's own earlier result: a transaction repeated after a
                // connection broke without an answer (this write, or the previous upload of the key whose
                // outcome was unknown). That write is confirmed; a newer one builds on it.
                confirmed = own
                result = .written(revision: current?.modRevision ?? revision)
            }
            switch result {
            case .written(let revision):
                core.confirmUpload(confirmed, forKey: key, revision: revision)
            case .conflict(let current, let revision):
                // Another writer changed the key since this write was made: the server wins.
                let value = current.flatMap { decode($0) }
                core.change { state in
                    state.inFlight[key] = nil
                    if state.pending[key]?.generation == write.generation { state.dropPending(key) }
                    guard current == nil || value != nil else { return ([], .serverChange) }
                    let changed = state.applyServerValue(value, forKey: key, revision: current?.modRevision ?? revision)
                    return (changed ? [key] : [], .serverChange)
                }
                reportLostUpdates()
                core.saveLocalCopy(.wholeStateNow)
            }
        }
    }

    /// Whether the server's `current` pair after a refused compare-and-swap is what `write` put there (a
    /// removal: the key is absent). Another machine that wrote the same value meanwhile counts too: the
    /// outcome is the same, and there is nothing to announce.
    func isOwnRepeat(_ write: PendingWrite, _ current: EtcdKeyValue?) -> Bool {
        guard let current else { return write.value == nil }
        guard let value = write.value, current.modRevision > write.baseRevision else { return false }
        return (try? CloudValueText.decode(current.value ?? Data(), key: current.key)) == value
    }

    // MARK: Watching

    private func startWatch() {
        let from = core.state.withLock { $0.lastRevision } + 1
        let prefix = configuration.keyPrefix
        let stream = client.watch(
            from: from,
            onEvents: { [self] _, events in apply(events, prefix: prefix) },
            onEnd: { [control] end in
                if case .cancelled = end { return }
                control.watchEnded(end)
            })
        watch.withLock { $0 = stream }
        stream.start()
    }

    /// One watch message: every event newer than the last seen revision, in order. (Older ones are old news,
    /// not a fault: a namespace read while this watch ran took them in already, or they are the last message
    /// of a watch that was replaced. A watch whose own events go back is ended by ``EtcdWatchOrder``.)
    private func apply(_ events: [(EtcdKeyValue, deleted: Bool)], prefix: String) {
        var decoded: [(key: String, value: DefaultsValue?, revision: Int64, text: Data?)] = []
        decoded.reserveCapacity(events.count)
        for (pair, deleted) in events {
            var pair = pair
            // The prefix's bytes, when the key starts with them (always, but for another normalisation): no
            // walk over characters.
            if pair.key.utf8.starts(with: prefix.utf8) {
                pair.key = String(decoding: pair.key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
            } else if pair.key.hasPrefix(prefix) {
                pair.key = String(pair.key.dropFirst(prefix.count))
            } else {
                continue
            }
            if CloudKeyValueStore.isReserved(pair.key) { continue }  // an update's marker
            if deleted {
                core.clear(.undecodableValue(key: pair.key))
                decoded.append((pair.key, nil, pair.modRevision, nil))
            } else if let value = decode(pair) {
                decoded.append((pair.key, value, pair.modRevision, pair.value))
            }
        }
        let lastEvent = events.lazy.map(\.0.modRevision).max() ?? 0
        var lost: [String] = []
        // Delivered on this thread when nothing else is being delivered: one hand-off less per event.
        core.change(deliverHere: true) { state in
            defer {
                if !state.lostUpdates.isEmpty {
                    lost = state.lostUpdates
                    state.lostUpdates = []
                }
            }
            let seen = state.lastRevision
            var changed = Set<String>()
            for event in decoded where event.revision > seen {
                if state.applyServerValue(event.value, forKey: event.key, revision: event.revision, text: event.text) {
                    changed.insert(event.key)
                }
            }
            state.watchReached(lastEvent)
            return (changed, .serverChange)
        }
        if !lost.isEmpty { reportLostUpdates(lost) }
        // Everything here is on the server already, which a restarted store reads first: it waits for the
        // next save, at most the bookkeeping delay (see the saver); a local write is saved at once.
        core.saveLocalCopy(.wholeStateEventually)
    }
}
