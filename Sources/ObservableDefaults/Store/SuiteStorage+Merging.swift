/// The one place memory takes in a version of the file that ``SuiteFile`` read or wrote.
extension SuiteStorage {
    /// What a merge changed in memory, announced once the locks are released (see ``announce(_:)``).
    struct Announcement {
        /// What memory's values did: outside changes, and the update's key and value.
        var changes = SuiteMemory.Changes()
        /// The observers of the changed keys.
        var observers: [SuiteObserver] = []
        /// Pending changes kept while the file was broken, to be written now that it parses.
        var mustWritePending = false
        /// A file error to publish (a version that does not parse, seen for the first time).
        var error: DefaultsError?
        /// What this version says of the file's problems: the file error it ended is over (it parses
        /// again, or could be read at last); the file is empty, or is not any more.
        var fileProblems = ErrorDelivery()
    }

    /// Takes a version of the file that parsed into memory: memory is the file with the pending changes
    /// on top. Called holding ``SuiteFile/withDocument(_:)``, so versions are merged in the order they were
    /// read and written, before the version becomes the known one.
    func merge(_ version: AdoptedVersion) -> Announcement {
        state.withLock { state in
            var announcement = Announcement()
            // A full re-read is compared key by key only when someone listens.
            let layered = state.layers.hasValues
            announcement.changes = state.memory.takeIn(
                version, comparing: !state.observers.isEmpty, recordingPrevious: layered)
            if layered { hideShadowedChanges(&announcement.changes, state) }
            let endedFileError = state.errors.fileError != nil
            announcement.fileProblems = state.errors.fileParsed(blank: version.isBlank, emptyError: emptyFileError())
            announcement.mustWritePending = endedFileError && state.memory.hasPendingChanges
            var keys = announcement.changes.outsideChanges
            if let updated = announcement.changes.updatedKey { keys.insert(updated) }
            announcement.observers = state.observers.hearing(anyOf: keys)
            return announcement
        }
    }

    /// Drops the changed keys whose effective value did not change: a higher layer hides the file's value,
    /// or a layer below gives the same value the file held or now holds.
    private func hideShadowedChanges(_ changes: inout SuiteMemory.Changes, _ state: State) {
        for key in changes.outsideChanges
        where !state.layers.fileChangeIsVisible(key, old: changes.previous[key] ?? nil, new: state.memory[key]) {
            changes.outsideChanges.remove(key)
        }
        if let key = changes.updatedKey,
            !state.layers.fileChangeIsVisible(key, old: changes.previous[key] ?? nil, new: state.memory[key])
        {
            changes.updatedKey = nil
        }
    }

    /// A version of the file that does not parse: memory keeps what it has; the error is kept as the
    /// file error, and published if it is news.
    func merge(_ broken: BrokenVersion) -> Announcement {
        state.withLock { $0.errors.keepFileError(broken.error) }
        return Announcement(error: broken.isNews ? broken.error : nil)
    }

    /// Publishes a merge's error and notifies its observers: outside changes first, then the update.
    func announce(_ announcement: Announcement) {
        if let error = announcement.error { report(error) }
        announcement.fileProblems.send()
        if !announcement.changes.outsideChanges.isEmpty {
            SuiteObservers.notify(announcement.observers, keys: announcement.changes.outsideChanges, origin: .outside)
        }
        if let key = announcement.changes.updatedKey {
            SuiteObservers.notify(announcement.observers, keys: [key], origin: .thisProcess)
        }
    }

    /// The problem of a suite file that exists and holds nothing (someone emptied it: the library never
    /// writes an empty suite).
    private func emptyFileError() -> DefaultsError {
        let object = format == .json ? "a JSON object (at least {})" : "a property list"
        return DefaultsError(
            .malformedFile,
            message: "the suite file is empty: every key reads its default until the file holds \(object) again",
            fileURL: fileURL)
    }

    static func changedKeys(from old: [ExactKey: DefaultsValue], to new: [ExactKey: DefaultsValue]) -> Set<ExactKey> {
        var changed = Set<ExactKey>()
        var common = 0
        for (key, value) in new {
            if let oldValue = old[key] {
                common += 1
                if oldValue != value { changed.insert(key) }
            } else {
                changed.insert(key)
            }
        }
        // Old keys missing from `new` exist only if fewer than all of them were found there.
        if common < old.count {
            for key in old.keys where new[key] == nil { changed.insert(key) }
        }
        return changed
    }
}
