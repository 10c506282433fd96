import Foundation

/// What taking in a late-read local copy changed (``CloudState/takeInLateCopy(_:)``).
struct LateCopyOutcome: Equatable {
    /// Keys whose value readers see changed.
    var changed: Set<String> = []
    /// Whether unsent writes of the copy wait for upload now.
    var restoredWrites = false
    /// Unsent writes of the copy dropped because it came from another account than the server's.
    var dropped: [String] = []
}

extension CloudState {
    /// Takes in a local copy that could be read only after the store had started without it (no
    /// descriptor was left at start), so that the result is what a start that had read it would hold now:
    ///
    /// - A key this process wrote since start (``writtenBeforeCopyRead``, or with a write pending) keeps
    ///   that write. Until the server is heard from, the write is based on the revision the copy knew (the
    ///   copy's own unsent write's base, else its server revision), as a write after a normal start is.
    /// - An unsent write of the copy comes back, to be uploaded, unless the server changed the key since
    ///   the write's base (known from a read of the namespace or the watch): then the server wins, as when
    ///   the upload's compare-and-swap is refused.
    /// - Any other value and revision of the copy is taken only for a key the server has not been heard of
    ///   since start; once the whole namespace was read (the store knows its account), the server's values
    ///   are newer than the copy's.
    /// - A copy from another account than the server's (cluster, namespace, user) brings nothing, and its
    ///   unsent writes are dropped, as at an account change. Before the server is reached, the copy's
    ///   account is taken, so the first read of the namespace checks it as it checks a copy read at start.
    mutating func takeInLateCopy(_ copy: CloudState) -> LateCopyOutcome {
        let writtenSinceStart = writtenBeforeCopyRead
        (localCopyUnread, writtenBeforeCopyRead) = (false, [])
        var outcome = LateCopyOutcome()
        let namespaceRead = account != nil
        if namespaceRead, let theirs = copy.account, theirs != account {
            outcome.dropped = copy.pending.keys.sorted()
            return outcome
        }
        if account == nil { account = copy.account }
        for key in Set(copy.values.keys).union(copy.pending.keys).union(copy.serverRevisions.keys) {
            let heard = namespaceRead || knownRevisions[key] != nil
            if !heard {
                serverRevisions[key] = copy.serverRevisions[key]
                knownRevisions[key] = copy.knownRevisions[key]
            }
            if writtenSinceStart.contains(key) || pending[key] != nil {
                if !heard, pending[key] != nil {
                    pending[key]?.baseRevision = copy.pending[key]?.baseRevision ?? copy.serverRevisions[key] ?? 0
                }
                continue
            }
            if let write = copy.pending[key] {
                // The server's revision of the key now is 0 when it has none.
                guard !heard || write.baseRevision == serverRevisions[key] ?? 0 else { continue }
                restore(write, forKey: key, madeAt: copy.writeTimes[key], into: &outcome)
            } else if !heard {
                writeTimes[key] = copy.writeTimes[key]
                if setValue(copy.values[key], forKey: key) { outcome.changed.insert(key) }
            }
        }
        return outcome
    }

    /// Makes `write`, an unsent write taken from a local copy, this store's pending write of `key` again
    /// (to be uploaded), made at `madeAt`.
    mutating func restore(
        _ write: PendingWrite, forKey key: String, madeAt: Int64?, into outcome: inout LateCopyOutcome
    ) {
        var restored = PendingWrite(
            value: write.value, baseRevision: write.baseRevision, generation: nextGeneration, text: write.text,
            batch: write.batch)
        restored.madeByEndedUpdate = write.madeByEndedUpdate || write.hasSteps
        pending[key] = restored
        nextGeneration += 1
        writeTimes[key] = madeAt
        outcome.restoredWrites = true
        if setValue(write.value, forKey: key, text: write.text) { outcome.changed.insert(key) }
    }
}
