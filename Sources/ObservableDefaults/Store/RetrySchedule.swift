/// When a failed write of pending changes is tried again: at most one retry scheduled at a time, after
/// a pause that doubles with each failure from ``firstDelay`` up to ``maximumDelay``, and starts over
/// after a write that succeeds.
struct RetrySchedule {
    /// The pause before the first automatic retry.
    static let firstDelay: Duration = .milliseconds(50)
    /// The longest pause between automatic retries.
    static let maximumDelay: Duration = .seconds(2)

    /// The pause that follows `delay` in the backoff.
    static func delay(after delay: Duration) -> Duration { min(delay * 2, maximumDelay) }

    private var isScheduled = false
    private var nextDelay = firstDelay

    /// Schedules the next retry unless one is scheduled already; returns the pause before it, or `nil`.
    mutating func schedule() -> Duration? {
        guard !isScheduled else { return nil }
        isScheduled = true
        defer { nextDelay = Self.delay(after: nextDelay) }
        return nextDelay
    }

    /// The scheduled retry runs now: another may be scheduled.
    mutating func started() { isScheduled = false }

    /// A write succeeded: the next failure waits ``firstDelay`` again.
    mutating func reset() { nextDelay = Self.firstDelay }
}
