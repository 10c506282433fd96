import Dispatch

/// Writing a suite's pending changes into its file, and what a failed write does: it is reported once,
/// retried on its own with backoff (``RetrySchedule``), and its recovery announced when the pending
/// changes finally land.
extension SuiteStorage {
    typealias AtomicUpdate = SuiteFile.AtomicUpdate

    /// ``persist()`` for callers without a way to throw: the failure is on the error channel already.
    func persistReportingErrors() {
        _ = try? persist()
    }

    /// Writes pending changes into the file: a key-granular read-modify-write under the cross-process
    /// lock. Keys other processes changed since our last look are kept (and announced as outside changes).
    /// A file that does not parse is never overwritten: the changes stay pending and the error is thrown.
    /// Whenever changes stay pending, a retry is scheduled (see ``scheduleRetry(after:)``), and a failure not
    /// reported yet is published on the error channel.
    func persist() throws(DefaultsError) {
        _ = try write(update: nil)
    }

    /// Runs ``AtomicUpdate`` `update` together with the pending changes, in one locked write; returns the
    /// stored value. Nothing changes when the write fails.
    func update(_ update: AtomicUpdate) throws(DefaultsError) -> DefaultsValue? {
        try write(update: update).changes.updatedValue
    }

    /// What a write did, to announce once the document is released.
    private enum WriteOutcome {
        case written(Announcement)
        /// `broken`: the merge of the version that does not parse, when that is why.
        case failed(DefaultsError, broken: Announcement?)
    }

    /// A write, in order: take the pending changes from memory, write them into the file, merge the
    /// written version into memory and make it the known one (all holding the document, so writes and
    /// re-reads are merged in the order they happened), then announce.
    private func write(update: AtomicUpdate?) throws(DefaultsError) -> Announcement {
        let outcome = file.withDocument { document -> WriteOutcome in
            // Taken holding the document: a write that waited for another must not write values older
            // than those the other one just wrote.
            let request = state.withLock { state -> SuiteFile.WriteRequest? in
                if !state.memory.hasPendingChanges && update == nil { return nil }
                return SuiteFile.WriteRequest(
                    pending: state.memory.pendingChanges, update: update, options: state.writeOptions)
            }
            guard let request else { return .written(Announcement()) }
            do throws(WriteFailure) {
                let version = try file.write(request, into: &document)
                let announcement = merge(version)
                file.makeKnown(version.identity)
                return .written(announcement)
            } catch {
                return .failed(error.error, broken: error.broken.map { merge($0) })
            }
        }
        // Announced once the document is released: a handler may set a key, which writes through.
        switch outcome {
        case .written(let announcement):
            announce(announcement)
            recordWriteSuccess()
            return announcement
        case .failed(let error, let broken):
            if let broken { announce(broken) } else { reportWriteFailure(error) }
            scheduleRetry(after: error)
            // Changes waiting for a broken file to parse again are written as soon as it does.
            updateWatching()
            throw error
        }
    }

    /// Publishes a failed write's error unless it is already known (see ``SuiteErrorChannel/writeFailed(_:)``).
    private func reportWriteFailure(_ error: DefaultsError) {
        state.withLock { $0.errors.writeFailed(error) }.send()
    }

    /// Schedules another attempt to write the pending changes, unless one is scheduled already. Only
    /// file-system failures are retried (a lock held too long, a full disk, a file or directory in the
    /// way): a file that does not parse is written once it parses again, when it is next read.
    private func scheduleRetry(after error: DefaultsError) {
        guard error.kind == .fileSystem else { return }
        let delay = state.withLock { state -> Duration? in
            guard state.memory.hasPendingChanges else { return nil }
            return state.retry.schedule()
        }
        guard let delay else { return }
        scheduler.after(delay, on: .global(qos: .utility)) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.retry.started() }
            self.persistReportingErrors()
        }
    }

    /// After a successful write: resets the backoff and, when the write ended an earlier failure, tells
    /// the recovery handlers.
    private func recordWriteSuccess() {
        let ended = state.withLock { state in
            state.retry.reset()
            return state.errors.writeSucceeded()
        }
        guard let ended else { return }
        ended.delivery.send()
        for handler in ended.recoveryHandlers { handler() }
    }
}
