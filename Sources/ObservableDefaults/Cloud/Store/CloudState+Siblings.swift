import Foundation

extension CloudState {
    /// Takes in the local copy of another process running the same store (same endpoints and namespace,
    /// same state directory; see ``CloudLocalCopyShare``), so that the writes of every process sharing the
    /// copy survive:
    ///
    /// - What the other copy knows of the server is taken where it is newer than what this state knows
    ///   (a higher revision of a key), as a server value is (``applyServerValue(_:forKey:revision:text:)``).
    /// - With `adoptingWrites` (its process has ended), its unsent writes become this store's, to be
    ///   uploaded: a write of a key is taken when it was made after this state's own local write of the key
    ///   (``writeTimes``), and when the server has not moved past the revision it was based on (then the
    ///   server wins, as the upload's compare-and-swap would find). A live process's unsent writes are left to
    ///   it: uploading them here too could put an older write of a key on the server after its newer one.
    /// - A value written locally that no server has seen (a local-only store) is taken when it was written
    ///   after this state's own value of the key.
    /// - A copy of another account (cluster, namespace, user) brings nothing; with `adoptingWrites` its unsent
    ///   writes are returned as dropped.
    mutating func takeIn(sibling copy: CloudState, adoptingWrites: Bool) -> LateCopyOutcome {
        var outcome = LateCopyOutcome()
        if let theirs = copy.account, let ours = account, theirs != ours {
            if adoptingWrites { outcome.dropped = copy.pending.keys.sorted() }
            return outcome
        }
        if account == nil { account = copy.account }
        for key in Set(copy.values.keys).union(copy.pending.keys).union(copy.writeTimes.keys) {
            let theirTime = copy.writeTimes[key]
            if let write = copy.pending[key] {
                guard adoptingWrites else { continue }
                let ours = pending[key] != nil || writeTimes[key] != nil ? writeTimes[key] ?? 0 : nil
                if let ours, (theirTime ?? 0) <= ours { continue }
                guard knownRevisions[key] ?? 0 <= write.baseRevision else { continue }
                restore(write, forKey: key, madeAt: theirTime, into: &outcome)
            } else if let revision = copy.serverRevisions[key] {
                if applyServerValue(copy.values[key], forKey: key, revision: revision) { outcome.changed.insert(key) }
            } else if knownRevisions[key] == nil, copy.knownRevisions[key] == nil, pending[key] == nil,
                isNewer(theirTime, than: key)
            {
                writeTimes[key] = theirTime
                if setValue(copy.values[key], forKey: key) { outcome.changed.insert(key) }
            }
        }
        return outcome
    }

    /// Whether a local value of `key` written at `time` (`nil`: not known, a copy of an earlier version) is
    /// newer than this state's: one without a time only replaces none at all.
    private func isNewer(_ time: Int64?, than key: String) -> Bool {
        guard let ours = writeTimes[key] else { return time != nil || values[key] == nil }
        return (time ?? 0) > ours
    }
}
