import Foundation

/// An `update(forKey:_:)` of an etcd store waiting for the sync thread, which runs it on the server.
final class CloudUpdateRequest: @unchecked Sendable {
    let key: String
    let step: CloudUpdateStep
    /// The observer the update is not announced to (the updating object's own).
    let skipping: Int?
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var outcome: Result<DefaultsValue?, any Error>?

    init(key: String, step: CloudUpdateStep, skipping: Int?) {
        self.key = key
        self.step = step
        self.skipping = skipping
    }

    /// Hands the outcome to the waiting caller.
    func finish(_ result: Result<DefaultsValue?, any Error>) {
        condition.withLock { outcome = result }
        condition.broadcast()
    }

    /// Waits for the outcome.
    func wait() -> Result<DefaultsValue?, any Error> {
        condition.withLock {
            while outcome == nil { condition.wait() }
            return outcome!
        }
    }
}

/// The queue of ``CloudUpdateRequest``s and whether the store is offline.
struct CloudUpdateRequests: Sendable {
    var queue: [CloudUpdateRequest] = []
    /// The last round failed: updates apply locally at once, to be uploaded (and run again) later.
    var offline = false
    /// The sync thread has stopped: nothing is queued any more.
    var closed = false
}

/// What the sync thread keeps about update transactions.
struct EtcdUpdateBookkeeping: Sendable {
    /// The lease the marker key is attached to, so that a store's marker goes some time after its last update.
    var lease: (id: Int64, granted: ContinuousClock.Instant)?
    /// The cluster refused a lease: markers go without one until then.
    var noLeaseUntil: ContinuousClock.Instant?
    /// Numbers the markers' tokens.
    var nextToken = 1
    /// The update transaction sent last whose answer was lost: it may have been carried out. It is sent
    /// again before any other update transaction (which would replace the marker that tells).
    var unanswered: EtcdSentTransaction?
    /// The most operations a transaction may have: the configuration's, halved when the server refused more.
    var operationLimit: Int
    /// Batches said to be split (once each).
    var splitReported: Set<Int64> = []
}

/// One transaction of writes (an update, a batch) as sent.
struct EtcdSentTransaction: Sendable {
    struct Member: Sendable {
        var key: String
        /// The pending write the transaction uploads (its generation and steps), with the value sent.
        var write: PendingWrite
    }

    var members: [Member]
    /// The marker's token (`nil`: no marker: plain writes only).
    var token: String?
}

/// `update(forKey:_:)` and batches on the server (see `Docs/cloud.md`, "Atomic updates and batches").
///
/// **Updates** run on the sync thread as a compare-and-swap loop on the key's modification revision: the
/// transform runs on the value memory holds (with a pending local write of the key folded in), the
/// transaction compares the revision that value had, and a refusal reads the key back in the same answer,
/// so the next attempt runs the transform on the server's value.
///
/// **Exactly once.** A transaction whose answer is lost (a member killed while it worked on it) may have
/// been carried out. Sent again to another member, its comparison then fails on its own result — and a
/// counter cannot tell "mine" from "another machine's +1". So an update transaction also puts a marker key,
/// `namespace/.observable-defaults/update/<writer>`, to a token naming the update; a refusal reads the
/// marker back, and finding the token there means an earlier attempt was carried out. Only this store
/// writes its marker, and its update transactions go one at a time from this thread; one whose answer was
/// lost everywhere is sent again before any other. The marker is attached to a lease of 24 hours (a new one
/// every hour), so a store's marker goes a day after its last update. Watches and reads skip the
/// `.observable-defaults/` keys.
///
/// **Batches** go up as one transaction: a comparison per key on the revision its write was based on, all
/// puts and deletes in the success branch. When one comparison fails, the server wins for every plain write
/// of the batch (it is one write), announced as a server change; update steps in it run again on the
/// server's values and go up in one transaction.
extension EtcdSync {
    /// The marker key of this store's update transactions.
    var markerKey: String { configuration.keyPrefix + CloudKeyValueStore.reservedKeyPrefix + "update/" + writerID }

    // MARK: Requests

    /// Runs `request` on the server and waits for it; `nil` when the store is offline (or stopped): the
    /// caller applies it locally.
    func perform(_ request: CloudUpdateRequest) -> Result<DefaultsValue?, any Error>? {
        let queued = updateRequests.withLock { requests -> Bool in
            guard !requests.closed, !requests.offline else { return false }
            requests.queue.append(request)
            return true
        }
        guard queued else { return nil }
        control.wakeNow()
        return request.wait()
    }

    /// Applies every queued request locally (the round failed: the store is offline now), and with `closing`
    /// takes no more.
    func applyUpdateRequestsLocally(closing: Bool) {
        let waiting = updateRequests.withLock { requests in
            defer { requests.queue = [] }
            requests.offline = true
            if closing { requests.closed = true }
            return requests.queue
        }
        for request in waiting { request.finish(applyLocally(request)) }
    }

    private func applyLocally(_ request: CloudUpdateRequest) -> Result<DefaultsValue?, any Error> {
        Result { try core.applyUpdateLocally(request.key, request.step, skipping: request.skipping, syncs: true) }
    }

    /// Serves the queued requests one at a time. A request that cannot reach the server is applied locally
    /// (and the marker of one that may have been carried out is checked first next time); the error ends
    /// the round.
    func serveUpdateRequests() throws(DefaultsError) {
        while let request = updateRequests.withLock({ $0.queue.isEmpty ? nil : $0.queue.removeFirst() }) {
            switch serve(request) {
            case .done(let result):
                request.finish(result)
            case .unreachable(let error, let sent):
                if let sent { updateBookkeeping.withLock { $0.unanswered = sent } }
                request.finish(applyLocally(request))
                throw error
            }
        }
    }

    private enum Served {
        case done(Result<DefaultsValue?, any Error>)
        /// No answer: `sent` may have been carried out.
        case unreachable(DefaultsError, sent: EtcdSentTransaction?)
    }

    /// The compare-and-swap loop of one request.
    private func serve(_ request: CloudUpdateRequest) -> Served {
        let key = request.key
        struct Start {
            var memory: DefaultsValue?
            var base: Int64
            var write: PendingWrite
        }
        // The key's pending write is folded in: its value is what the transform sees first, and its update
        // steps run again (before this one) when the server moved on. A key waiting in a batch joins it.
        let start = core.state.withLock { state -> Start? in
            if state.openBatch != nil || state.pending[key]?.batch != nil { return nil }
            let pending = state.pending[key]
            var write = pending ?? PendingWrite(value: nil, baseRevision: 0, generation: 0)
            if pending == nil { write.chainStart = nil }
            write.baseRevision = pending?.baseRevision ?? state.serverRevisions[key] ?? 0
            return Start(memory: state.values[key], base: write.baseRevision, write: write)
        }
        guard let start else { return .done(applyLocally(request)) }
        let token = nextToken()
        var current = start.memory
        var base = start.base
        var first = true
        var conflicts = 0
        func end(_ result: Result<DefaultsValue?, any Error>, serverValue: Bool) -> Served {
            core.change { state in
                state.inFlight[key] = nil
                state.updateInFlight[key] = nil
                // The server's value learned on the way (an update that then failed) is taken in.
                guard serverValue, !first, state.applyServerValue(current, forKey: key, revision: base) else {
                    return ([], .serverChange)
                }
                return ([key], .serverChange)
            }
            return .done(result)
        }
        while true {
            let value: DefaultsValue?
            do {
                value = try request.step.transform(
                    first ? current : CloudUpdateStep.run(start.write.steps, on: current))
            } catch {
                return end(.failure(error), serverValue: true)
            }
            let text = value.map(CloudValueText.encode)
            var write = start.write
            write.value = value
            write.text = text
            write.baseRevision = base
            write.steps.append(request.step)
            let refusal = core.state.withLock { state -> String? in
                if value != nil,
                    let why = core.limits.violation(
                        key: key, valueBytes: text?.count, sizes: state.sizes, totalBytes: state.totalBytes)
                {
                    return why
                }
                if state.pending[key] != nil { state.inFlight[key] = write }
                state.updateInFlight[key] = value
                return nil
            }
            if let refusal { return end(.failure(core.overLimits(key, refusal)), serverValue: true) }
            let sent = EtcdSentTransaction(members: [.init(key: key, write: write)], token: token)
            let answer: EtcdTransactionResult
            do {
                answer = try send(sent)
            } catch {
                _ = end(.success(nil), serverValue: false)
                return .unreachable(error, sent: Self.isDefinite(error) ? nil : sent)
            }
            do {
                if answer.succeeded {
                    confirm(
                        sent, at: answer.header.revision, skipping: request.skipping,
                        announcingServerChange: !first && current != start.memory)
                    return .done(.success(value))
                }
                let ranges = try answer.rangeResponses(context: transactionContext)
                guard ranges.count == 2 else {
                    throw DefaultsError.malformedEtcdAnswer(
                        transactionContext, "a refused update read back \(ranges.count) keys, not 2")
                }
                if let marker = ranges[1], marker.value == Data(token.utf8) {
                    // An attempt whose answer was lost was carried out (this one, sent again to another member).
                    confirm(
                        sent, at: marker.modRevision, skipping: request.skipping,
                        announcingServerChange: !first && current != start.memory)
                    takeNewer(ranges[0], than: marker.modRevision, forKey: key)
                    return .done(.success(value))
                }
                // Another machine changed the key: run the transform again on the server's value, after a
                // short random pause that grows with the conflicts (every attempt is a proposal the cluster
                // writes to disk, refused or not: writers that all retry at once mostly waste them).
                conflicts += 1
                Self.backOff(after: conflicts)
                if let pair = ranges[0] {
                    guard let decoded = decode(pair) else {
                        throw DefaultsError(
                            .cloud, message: "the server's value cannot be read, so the update was not made", key: key)
                    }
                    current = decoded
                    base = pair.modRevision
                } else {
                    current = nil
                    base = 0
                }
                first = false
            } catch {
                return end(.failure(error), serverValue: false)
            }
        }
    }

    /// Waits a random time up to 1 ms × 2^(conflicts − 1), at most 32 ms, after the `conflicts`-th refused
    /// attempt of an update in a row.
    static func backOff(after conflicts: Int) {
        let ceiling = min(0.032, 0.001 * Double(1 << min(conflicts - 1, 5)))
        usleep(useconds_t(Double.random(in: 0...ceiling) * 1_000_000))
    }

    /// Whether a failed request certainly was not carried out: every member refused the connection.
    private static func isDefinite(_ error: DefaultsError) -> Bool { EtcdClient.isRefusedEverywhere(error) }

    private func nextToken() -> String {
        let number = updateBookkeeping.withLock { bookkeeping in
            defer { bookkeeping.nextToken += 1 }
            return bookkeeping.nextToken
        }
        return "\(writerID)-\(number)"
    }

    // MARK: The transaction

    /// Sends the transaction of `sent`'s members (with the marker when it has a token): the body is built
    /// with the marker's current lease, and built again with a new lease when the cluster no longer knows it.
    private func send(_ sent: EtcdSentTransaction) throws(DefaultsError) -> EtcdTransactionResult {
        var retriedLease = false
        while true {
            let lease = sent.token == nil ? nil : try markerLease()
            let writes = sent.members.map { member in
                (
                    key: configuration.keyPrefix + member.key, value: member.write.text,
                    expected: member.write.baseRevision
                )
            }
            let transaction = EtcdTransaction.writes(writes, marker: sent.token.map { (markerKey, $0, lease) })
            do {
                return try client.transaction(transaction, whileWaiting: saveTakenWrite)
            } catch  where !retriedLease && lease != nil && EtcdFailure.isLeaseNotFound(error) {
                // The lease expired or the cluster was re-created: the transaction was refused as a whole.
                retriedLease = true
                updateBookkeeping.withLock { $0.lease = nil }
            }
        }
    }

    /// How errors name a transaction at the current endpoint.
    private var transactionContext: String { client.wire.context(.transaction, at: client.currentEndpoint) }

    /// The lease for the marker: granted once an hour for 24 hours; `nil` when the cluster refuses leases.
    private func markerLease() throws(DefaultsError) -> Int64? {
        let now = ContinuousClock.now
        let known = updateBookkeeping.withLock { bookkeeping -> Int64?? in
            if let lease = bookkeeping.lease, now - lease.granted < .seconds(3_600) { return .some(lease.id) }
            if let until = bookkeeping.noLeaseUntil, now < until { return .some(nil) }
            return nil
        }
        if let known { return known }
        do throws(DefaultsError) {
            let id = try client.grantLease(ttl: 86_400, whileWaiting: saveTakenWrite)
            updateBookkeeping.withLock { $0.lease = (id, now) }
            return id
        } catch  where error.message.hasPrefix("etcd refused the request") || error.message.hasPrefix("etcd denied") {
            // A cluster that refuses leases to this user: the marker goes without one (it stays).
            updateBookkeeping.withLock { $0.noLeaseUntil = now + .seconds(3_600) }
            return nil
        }
    }

    // MARK: Confirming

    /// Confirms every member of `sent` as written at `revision`: memory follows unless a newer local write
    /// is pending, and a newer pending write made of later update steps is worked out again on the value
    /// written. The changed keys are announced to this process's objects (except `skipping`) and, when
    /// the value written was worked out on the server's value, as a server change.
    private func confirm(_ sent: EtcdSentTransaction, at revision: Int64, skipping: Int?, announcingServerChange: Bool)
    {
        var recompute: [(String, PendingWrite, DefaultsValue?)] = []
        core.change { state in
            var changed = Set<String>()
            for member in sent.members {
                let write = member.write
                switch state.confirmChain(
                    write, uploaded: write.value, text: write.text, forKey: member.key, revision: revision)
                {
                case .done(let didChange): if didChange { changed.insert(member.key) }
                case .recompute:
                    if let newer = state.pending[member.key] { recompute.append((member.key, newer, write.value)) }
                }
            }
            if announcingServerChange { return (changed, .serverChange) }
            for key in changed { core.announceLocalWrite(key, skipping: skipping) }
            return ([], .serverChange)
        }
        for (key, write, confirmed) in recompute { workOut(write, forKey: key, on: confirmed) }
        core.saveLocalCopy(.wholeStateEventually)
    }

    /// Works out the value of the pending write of `key` again: its update steps on the `confirmed` value,
    /// until no newer write came meanwhile; announced as a server change.
    private func workOut(_ write: PendingWrite, forKey key: String, on confirmed: DefaultsValue?) {
        var write = write
        while true {
            let value = CloudUpdateStep.run(write.steps, on: confirmed) {
                core.report(
                    DefaultsError(
                        .cloud, message: "an update could not run again on the server's value: \($0)", key: key))
            }
            var again: PendingWrite?
            core.change { state in
                switch state.recompute(write.generation, forKey: key, to: value) {
                case .some(let changed): return (changed ? [key] : [], .serverChange)
                case .none:
                    again = state.pending[key]
                    return ([], .serverChange)
                }
            }
            guard let next = again else { return }
            write = next
        }
    }

    /// Takes in the server's pair of `key` read back after a confirmation, when it is newer than `revision`.
    private func takeNewer(_ pair: EtcdKeyValue?, than revision: Int64, forKey key: String) {
        guard let pair, pair.modRevision > revision, let value = decode(pair) else { return }
        core.change { state in
            (
                state.applyServerValue(value, forKey: key, revision: pair.modRevision, text: pair.value) ? [key] : [],
                .serverChange
            )
        }
    }

    /// Reports each write made by an update of an earlier process that lost to another machine's change:
    /// `keys`, else those the state noted.
    func reportLostUpdates(_ keys: [String]? = nil) {
        let lost =
            keys
            ?? core.state.withLock { state -> [String] in
                defer { state.lostUpdates = [] }
                return state.lostUpdates
            }
        for key in lost {
            core.report(
                DefaultsError(
                    .cloud,
                    message:
                        "an update made while offline by a process that ended was not uploaded: another machine changed the key first, "
                        + "and the update's transform ended with that process (a local copy keeps values, not transforms); the server's value wins",
                    key: key))
        }
    }

    // MARK: The answer lost

    /// Sends the update transaction whose answer was lost again, before any other update transaction (which
    /// would replace the marker): carried out now, or before (its marker is there), it is confirmed; refused
    /// on another write, it was never carried out, and its writes go up again with the pending ones.
    func resolveUnansweredUpdate() throws(DefaultsError) {
        guard let sent = updateBookkeeping.withLock({ $0.unanswered }), let token = sent.token else { return }
        let answer = try send(sent)
        updateBookkeeping.withLock { $0.unanswered = nil }
        if answer.succeeded {
            confirm(sent, at: answer.header.revision, skipping: nil, announcingServerChange: true)
            return
        }
        let ranges = try answer.rangeResponses(context: transactionContext)
        if let marker = ranges.last ?? nil, marker.value == Data(token.utf8) {
            confirm(sent, at: marker.modRevision, skipping: nil, announcingServerChange: true)
            for (member, pair) in zip(sent.members, ranges) {
                takeNewer(pair, than: marker.modRevision, forKey: member.key)
            }
        } else {
            core.state.withLock { state in
                for member in sent.members { state.inFlight[member.key] = nil }
            }
        }
    }

    // MARK: Batches and update steps

    /// Uploads the batch the pending write of `key` belongs to (or its update steps) in one transaction,
    /// at most ``EtcdUpdateBookkeeping/operationLimit`` operations (a bigger batch goes in parts, in key
    /// order, and the store says so once). See the extension's documentation for a refused comparison.
    func uploadGroup(of key: String) throws(DefaultsError) {
        let limit = updateBookkeeping.withLock { $0.operationLimit }
        var split: (batch: Int64, keys: Int)?
        var members = core.state.withLock { state -> [EtcdSentTransaction.Member] in
            guard let first = state.pending[key] else { return [] }
            var keys = [key]
            if let batch = first.batch {
                keys = state.pending.compactMap { $0.value.batch == batch ? $0.key : nil }.sorted()
                let room = max(1, limit - (keys.contains { state.pending[$0]?.hasSteps == true } ? 1 : 0))
                if keys.count > room {
                    split = (batch, keys.count)
                    keys = Array(keys.prefix(room))
                }
            }
            return keys.map { key in
                let write = state.pending[key]!
                state.inFlight[key] = write
                return EtcdSentTransaction.Member(key: key, write: write)
            }
        }
        guard !members.isEmpty else { return }
        if let split { reportSplit(split.batch, keys: split.keys, limit: limit) }
        var token: String? = members.contains { $0.write.hasSteps } ? nextToken() : nil
        while true {
            let answer: EtcdTransactionResult
            let sent = EtcdSentTransaction(members: members, token: token)
            do {
                answer = try send(sent)
            } catch {
                if members.count > 1, EtcdFailure.isTransactionTooLarge(error) {
                    // The server takes fewer: half as many from now on; the batch goes in more parts.
                    let smaller = max(1, members.count / 2)
                    updateBookkeeping.withLock {
                        $0.operationLimit = min($0.operationLimit, smaller + (token == nil ? 0 : 1))
                    }
                    core.report(
                        DefaultsError(
                            .cloud,
                            message: "etcd refused a transaction of \(members.count) writes (\(error.message)); "
                                + "batches go up in parts of at most \(smaller) keys from now on (set EtcdConfiguration.maxTransactionOperations to the cluster's --max-txn-ops)"
                        ))
                    core.state.withLock { state in for member in members { state.inFlight[member.key] = nil } }
                    return
                }
                if token != nil, !Self.isDefinite(error) { updateBookkeeping.withLock { $0.unanswered = sent } }
                throw error
            }
            if answer.succeeded {
                confirm(sent, at: answer.header.revision, skipping: nil, announcingServerChange: true)
                return
            }
            let ranges = try answer.rangeResponses(context: transactionContext)
            guard ranges.count == members.count + (token == nil ? 0 : 1) else {
                throw DefaultsError.malformedEtcdAnswer(
                    transactionContext, "a refused batch read back \(ranges.count) keys for \(members.count) writes")
            }
            if let token, let marker = ranges.last ?? nil, marker.value == Data(token.utf8) {
                confirm(sent, at: marker.modRevision, skipping: nil, announcingServerChange: true)
                for (member, pair) in zip(members, ranges) {
                    takeNewer(pair, than: marker.modRevision, forKey: member.key)
                }
                return
            }
            let current = Array(ranges.prefix(members.count))
            if token == nil, zip(members, current).allSatisfy({ isOwnRepeat($0.write, $1) }) {
                // Carried out before, its answer lost (or another machine wrote the same values): confirmed.
                let revision = current.compactMap { $0?.modRevision }.max() ?? 0
                core.state.withLock { state in
                    for member in members { state.confirmUpload(member.write, forKey: member.key, revision: revision) }
                }
                core.saveLocalCopy(.wholeStateEventually)
                return
            }
            // Refused: the server wins for the plain writes when one of them lost; update steps run again.
            let plainLost = zip(members, current).contains { member, pair in
                !member.write.hasSteps && (pair?.modRevision ?? 0) != member.write.baseRevision
            }
            var next: [EtcdSentTransaction.Member] = []
            var refused: [(String, String)] = []
            core.change { state in
                var changed = Set<String>()
                for (member, pair) in zip(members, current) {
                    let key = member.key
                    let value = pair.flatMap { decode($0) }
                    let revision = pair?.modRevision ?? 0
                    if member.write.hasSteps {
                        guard pair == nil || value != nil else {
                            // The server's value cannot be read: the steps cannot run on it; the server wins.
                            state.inFlight[key] = nil
                            if state.pending[key]?.generation == member.write.generation { state.pending[key] = nil }
                            continue
                        }
                        var write = member.write
                        if revision != write.baseRevision {
                            write.value = CloudUpdateStep.run(write.steps, on: value) { error in
                                core.report(
                                    DefaultsError(
                                        .cloud,
                                        message: "an update could not run again on the server's value: \(error)",
                                        key: key))
                            }
                            write.text = write.value.map(CloudValueText.encode)
                            write.baseRevision = revision
                            if write.value != nil,
                                let why = core.limits.violation(
                                    key: key, valueBytes: write.text?.count, sizes: state.sizes,
                                    totalBytes: state.totalBytes)
                            {
                                refused.append((key, why))
                                state.inFlight[key] = nil
                                if state.pending[key]?.generation == write.generation { state.pending[key] = nil }
                                if state.takeServerValue(value, forKey: key, revision: revision, text: pair?.value) {
                                    changed.insert(key)
                                }
                                continue
                            }
                        }
                        state.inFlight[key] = write
                        next.append(.init(key: key, write: write))
                    } else if plainLost {
                        state.inFlight[key] = nil
                        guard state.pending[key]?.generation == member.write.generation else {
                            // Written again since: that write goes up on its own and meets the server then.
                            continue
                        }
                        state.dropPending(key)
                        if pair == nil || value != nil,
                            state.takeServerValue(value, forKey: key, revision: revision, text: pair?.value)
                        {
                            changed.insert(key)
                        }
                    } else {
                        next.append(member)
                    }
                }
                return (changed, .serverChange)
            }
            for (key, why) in refused {
                var error = core.overLimits(key, why)
                error.message +=
                    "; the update ran again on the server's value at upload, and its result is dropped: the server's value is kept"
                core.report(error)
            }
            reportLostUpdates()
            core.saveLocalCopy(.wholeStateNow)
            guard !next.isEmpty else { return }
            members = next
            if token == nil, members.contains(where: { $0.write.hasSteps }) { token = nextToken() }
        }
    }

    /// Says once per batch that it goes up in parts.
    private func reportSplit(_ batch: Int64, keys: Int, limit: Int) {
        let first = updateBookkeeping.withLock { $0.splitReported.insert(batch).inserted }
        guard first else { return }
        let parts = (keys + limit - 1) / limit
        core.report(
            DefaultsError(
                .cloud,
                message:
                    "a batch of \(keys) keys is more than etcd takes in one transaction (at most \(limit) operations: "
                    + "EtcdConfiguration.maxTransactionOperations, the cluster's --max-txn-ops): it goes up in \(parts) transactions of at most \(limit) keys, "
                    + "in key order, so other machines may see it in parts"))
    }
}
