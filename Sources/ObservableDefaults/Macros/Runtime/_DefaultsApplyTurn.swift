import Synchronization

/// Lets one thread at a time apply outside changes to one slot, so a change is announced once.
///
/// Applying compares the copy with the source and stores the new copy in two steps, around `willSet` (which
/// must not run under the slot's lock). Two threads applying at once — two deliveries of the suite's
/// observer, or a delivery and the object's own re-read — could both find the copy different and both
/// announce the same change. The thread that takes the turn applies; one that finds it taken asks the holder
/// to go once more and returns at once (it never waits, so an observer that changes the key again on the
/// same thread cannot deadlock). The holder re-reads the source before it lets go, so the last value is
/// never lost.
struct _DefaultsApplyTurn: ~Copyable {
    private static let idle: UInt8 = 0, busy: UInt8 = 1, again: UInt8 = 2
    private let state = Atomic<UInt8>(idle)

    init() {}

    /// Runs `pass` on this thread while the turn is held, once more for every request to go again; returns
    /// at once, after asking the holder to go again, when another thread holds it.
    func take(_ pass: () -> Void) {
        while !state.compareExchange(expected: Self.idle, desired: Self.busy, ordering: .acquiringAndReleasing)
            .exchanged
        {
            let (asked, found) = state.compareExchange(
                expected: Self.busy, desired: Self.again, ordering: .acquiringAndReleasing)
            if asked || found == Self.again { return }
            // The holder let go meanwhile: take the turn.
        }
        repeat { pass() } while !release()
    }

    /// Lets go of the turn, unless another thread asked for one more pass (then keeps it: `false`).
    private func release() -> Bool {
        if state.compareExchange(expected: Self.busy, desired: Self.idle, ordering: .acquiringAndReleasing).exchanged {
            return true
        }
        state.store(Self.busy, ordering: .sequentiallyConsistent)
        return false
    }
}
