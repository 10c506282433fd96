import Dispatch

/// Re-reading a suite's file after an outside change and announcing the keys that differ.
extension SuiteStorage {
    /// What a read of the file found, merged into memory, to announce once the document is released.
    enum ReadOutcome {
        /// Memory already holds this version of the file (or the gate refused the read).
        case unchanged
        /// The file could not be read at all.
        case unreadable(DefaultsError)
        /// The file does not parse.
        case broken(Announcement)
        /// A new version is in memory; `released`: sorted entries to free once observers have heard
        /// (freeing a large suite's entries takes a while).
        case adopted(Announcement, released: [SuiteFile.Entry]?)
    }

    /// The watcher's event: ``reloadFromDisk(gate:)``, unless the file is the version a write of this
    /// process is merging now (see ``SuiteFile/isKnownOrBeingAdopted``), which announces it itself.
    func fileMayHaveChanged(gate: @escaping WatchEvent.ReadGate) {
        if file.isKnownOrBeingAdopted { return }
        reloadFromDisk(gate: gate)
    }

    /// Re-reads the file if it changed since this process last read or wrote it, and announces the keys
    /// whose value differs as outside changes. Pending changes kept while the file was broken are written
    /// once it parses again. `gate`: see ``WatchEvent/ReadGate``.
    func reloadFromDisk(gate: WatchEvent.ReadGate? = nil) {
        // The event for our own write (or a touch that changed nothing) ends here, without waiting for
        // a write under way: the identity is made known after memory took the version in.
        if file.isUnchangedOnDisk { return }
        take(read(gate: gate))
    }

    /// Re-reads the file unless it is a known version, and merges what it found into memory; then the
    /// version becomes the known one. All of it holding the document, so versions are merged in the order
    /// they were read and written.
    func read(gate: WatchEvent.ReadGate?) -> ReadOutcome {
        file.withDocument { document in
            switch file.reread(&document, gate: gate) {
            case .unchanged:
                return .unchanged
            case .unreadable(let error):
                return .unreadable(error)
            case .broken(let broken):
                return .broken(merge(broken))
            case .adopted(let version):
                let announcement = merge(version)
                file.makeKnown(version.identity)
                return .adopted(announcement, released: version.released)
            }
        }
    }

    /// Reads a file that could not be read at start for a reason that may pass (no descriptor left), after
    /// `delay` and again with a doubling delay (up to ``RetrySchedule/maximumDelay``) until it is read, by this or
    /// by a write (which reads a version it does not know first); what it holds is then announced as
    /// outside changes, and ``fileError`` ends. A write made meanwhile lands beside the file's keys.
    func readAgainUntilReadable(after delay: Duration = RetrySchedule.firstDelay) {
        scheduler.after(delay, on: .global(qos: .utility)) { [weak self] in
            guard let self, self.state.withLock({ $0.errors.fileError?.isTransient == true }) else { return }
            switch self.read(gate: nil) {
            case .unreadable(let error) where error.isTransient:
                self.readAgainUntilReadable(after: RetrySchedule.delay(after: delay))
            case .unreadable(let error):
                self.state.withLock { $0.errors.reportFileError(error) }.send()
            case let outcome:
                self.take(outcome)
            }
        }
    }

    /// Announces what a read of the file found.
    private func take(_ outcome: ReadOutcome) {
        switch outcome {
        case .unchanged:
            return
        case .broken(let announcement):
            announce(announcement)
        case .unreadable(let error):
            report(error)
        case .adopted(let announcement, let released):
            announce(announcement)
            // Freeing a large suite's entries takes a while; observers should not wait for it.
            withExtendedLifetime(released) {}
            if announcement.mustWritePending {
                persistReportingErrors()
                updateWatching()
            }
        }
    }
}
