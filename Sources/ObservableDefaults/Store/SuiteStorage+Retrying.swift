import Dispatch
import Foundation

/// Failed writes: reporting them once, retrying on their own with backoff, and announcing when the
/// pending changes finally land.
extension SuiteStorage {
    /// The pause before the first automatic retry of a failed write.
    static let firstRetryDelay: Duration = .milliseconds(50)
    /// The longest pause between automatic retries.
    static let maximumRetryDelay: Duration = .seconds(2)

    /// Publishes a failed write's error unless it is already known: a broken file was published when it
    /// was found, and the same write failure (same kind and `errno`; the details, such as which process
    /// holds the lock, may vary) is reported once, not at every retry.
    func reportWriteFailure(_ error: DefaultsError) {
        if state.withLock({ $0.errors.writeFailed(error) }) { report(error) }
    }

    /// Schedules another attempt to write the pending changes, unless one is scheduled already. Only
    /// file-system failures are retried (a lock held too long, a full disk, a file or directory in the
    /// way): a file that does not parse is written once it parses again, when it is next read.
    func scheduleRetry(after error: DefaultsError) {
        guard error.kind == .fileSystem else { return }
        let delay = state.withLock { state -> Duration? in
            guard state.memory.hasPendingChanges, !state.retryScheduled else { return nil }
            state.retryScheduled = true
            defer { state.retryDelay = min(state.retryDelay * 2, Self.maximumRetryDelay) }
            return state.retryDelay
        }
        guard let delay else { return }
        DelayedWork.shared.after(delay, on: .global(qos: .utility)) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.retryScheduled = false }
            self.persistReportingErrors()
        }
    }

    /// After a successful write: resets the backoff and, when the write ended an earlier failure, tells
    /// the recovery handlers.
    func recordWriteSuccess() {
        let ended = state.withLock { state in
            state.retryDelay = Self.firstRetryDelay
            return state.errors.writeSucceeded()
        }
        guard let ended else { return }
        reportRecovery(ended.error)
        for handler in ended.recoveryHandlers { handler() }
    }
}
