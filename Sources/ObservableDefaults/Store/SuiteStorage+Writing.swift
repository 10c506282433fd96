/// Writing a suite's pending changes into its file (see ``SuiteFile/write(_:merge:)``), and what a
/// failed write does.
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
        try write(update: update).updatedValue
    }

    private func write(update: AtomicUpdate?) throws(DefaultsError) -> Announcement {
        // Announced after the file's lock is released: a handler may set a key, which writes through and
        // takes that lock again.
        let announcement: Announcement
        do {
            announcement = try file.write({
                state.withLock { state in
                    if !state.memory.hasPendingChanges && update == nil { return nil }
                    return SuiteFile.WriteRequest(
                        pending: state.memory.pendingChanges, update: update, synchronize: state.synchronizesToDisk,
                        lockWaitLimit: state.lockWaitLimit)
                }
            }, merge: merge) ?? Announcement()
        } catch {
            if let broken = error.broken { announce(broken) } else { reportWriteFailure(error.error) }
            scheduleRetry(after: error.error)
            // Changes waiting for a broken file to parse again are written as soon as it does.
            updateWatching()
            throw error.error
        }
        announce(announcement)
        recordWriteSuccess()
        return announcement
    }
}
