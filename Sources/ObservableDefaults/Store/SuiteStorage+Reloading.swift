/// Re-reading a suite's file after an outside change and announcing the keys that differ.
extension SuiteStorage {
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
        switch file.reread(gate: gate, merge: merge) {
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
