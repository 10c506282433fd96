/// The bound on one wait for a writers' lock: it ends once a whole `limit` has passed in which the lock's
/// holders got nothing done.
///
/// A fixed deadline cannot tell a stuck holder from busy ones: `flock` is polled, so a waiter that sleeps
/// between attempts can keep missing the short gaps between writers that take the lock one after another,
/// and would give up (and report a timeout) while the suite is healthy and every other write lands. So
/// the wait is measured against progress instead: what the holders change when they get something done
/// (the suite file for its lock, the directory for the commit lock, whose change time moves with every
/// rename in it). Each time the limit runs out the thing is looked at once; if it changed since the last
/// look, the wait goes on for another `limit`. A holder that makes no progress (hung, stopped, or holding
/// the lock on purpose) is given up on after `limit`, and at most twice that after its last change.
struct LockWait {
    /// How long to wait without progress.
    let limit: Duration
    private let path: String
    private var seen: FileIdentity?
    private var deadline: ContinuousClock.Instant

    /// Starts the wait now; `path` is the file or directory the lock's holders change as they progress.
    init(limit: Duration, progressAt path: String) {
        self.limit = limit
        self.path = path
        seen = FileIdentity.of(path: path)
        deadline = .now + limit
    }

    /// Whether to give up: the limit has run out and `path` is as it was when the limit started.
    mutating func isOver() -> Bool {
        let now = ContinuousClock.now
        guard now >= deadline else { return false }
        let current = FileIdentity.of(path: path)
        if current == seen { return true }
        seen = current
        deadline = now + limit
        return false
    }
}
