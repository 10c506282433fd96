import Foundation

/// Where the sync loop stands between rounds: what the next round must do before it uploads, whether the
/// cluster was out of reach, how long to back off after a failed round, and when the watched member was
/// last probed. Owned by the sync thread alone.
struct EtcdSyncPhase {
    /// What a round does before it uploads. A need noted later never lowers one noted earlier: a read
    /// covers a check, and the first read stays the first until it succeeds.
    enum Opening: Comparable {
        /// Nothing: the store is in sync, and contact was kept.
        case nothing
        /// Contact was lost (a failed round, a broken watch): make sure a member answers, for the cluster
        /// the store's revisions came from (it may have been re-created meanwhile).
        case check
        /// Read the whole namespace again: compaction, a watch that cannot be followed past a message, an
        /// answer from another cluster.
        case read
        /// The first load: the namespace was never read.
        case firstRead
    }

    /// The back-off after the first failed round; it doubles with each failure that follows.
    static let firstBackoff: TimeInterval = 0.05
    /// The longest back-off between failed rounds.
    static let longestBackoff: TimeInterval = 1

    private(set) var opening = Opening.firstRead
    private(set) var backoff = firstBackoff
    /// A round failed since the last that succeeded: the cluster was out of reach.
    private(set) var inOutage = false
    /// When the watched member was last probed for an answer.
    var lastProbe = ContinuousClock.now

    /// Notes that the next round must do `step` first (unless it must do more).
    mutating func needs(_ step: Opening) {
        opening = max(opening, step)
    }

    /// The round did what ``opening`` asked.
    mutating func opened() {
        opening = .nothing
    }

    /// A round succeeded; returns whether it ended an outage.
    mutating func succeeded() -> Bool {
        backoff = Self.firstBackoff
        defer { inOutage = false }
        return inOutage
    }

    /// A round failed: the next one checks contact first; returns how long to wait before it.
    mutating func failed() -> TimeInterval {
        needs(.check)
        inOutage = true
        defer { backoff = min(backoff * 2, Self.longestBackoff) }
        return backoff
    }
}
