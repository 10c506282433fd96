/// A suite's memory: the file's contents with this process's not-yet-written changes on top, in one map, so
/// a write hashes its key once (memory and the pending change are one entry).
///
/// A key removed here and not written yet stays as an entry without a value until the removal lands.
struct SuiteMemory {
    struct Entry: Equatable {
        /// What readers see; `nil`: removed here, the removal not in the file yet.
        var value: DefaultsValue?
        /// Changed here and not in the file yet.
        var isPending: Bool
    }

    /// Keys compare by their bytes (see ``ExactKey``), as the file tells them apart.
    private(set) var entries: [ExactKey: Entry] = [:]
    /// The keys of the pending entries, each once.
    private(set) var pendingKeys: [ExactKey] = []

    /// What readers see for `key`.
    subscript(key: ExactKey) -> DefaultsValue? { entries[key]?.value }

    /// What readers see: every key with a value.
    var values: [ExactKey: DefaultsValue] { entries.compactMapValues(\.value) }

    var hasPendingChanges: Bool { !pendingKeys.isEmpty }

    func isPending(_ key: ExactKey) -> Bool { entries[key]?.isPending == true }

    /// The changes made here that are not in the file yet (`nil` value: the key was removed).
    var pending: [ExactKey: DefaultsValue?] {
        var pending = [ExactKey: DefaultsValue?](minimumCapacity: pendingKeys.count)
        for key in pendingKeys { pending[key] = .some(entries[key]?.value) }
        return pending
    }

    /// A change made here (`nil` removes the key): memory takes it and it becomes pending. An equal value is
    /// left as it is (strings equal by canonical equivalence may differ in bytes, and memory keeps what the
    /// file holds). Returns whether memory changed. One hashed lookup.
    mutating func set(_ value: DefaultsValue?, forKey key: ExactKey) -> Bool {
        if let index = entries.index(forKey: key) {
            if entries.values[index].value == value { return false }
            let wasPending = entries.values[index].isPending
            entries.values[index] = Entry(value: value, isPending: true)
            if !wasPending { pendingKeys.append(key) }
        } else {
            guard let value else { return false }
            entries[key] = Entry(value: value, isPending: true)
            pendingKeys.append(key)
        }
        return true
    }

    /// The file's value for a key that is not pending (a change from outside, or an atomic update's result).
    /// Returns whether memory changed.
    mutating func adopt(_ value: DefaultsValue?, forKey key: ExactKey) -> Bool {
        if entries[key]?.value == value { return false }
        entries[key] = value.map { Entry(value: $0, isPending: false) }
        return true
    }

    /// A write put `written` in the file: a pending entry whose value it wrote is pending no more (one
    /// changed again since stays pending).
    mutating func landed(_ written: [ExactKey: DefaultsValue?]) {
        var landed = false
        for (key, value) in written {
            guard let index = entries.index(forKey: key), entries.values[index].isPending,
                  entries.values[index].value == value else { continue }
            if value == nil {
                entries.remove(at: index)
            } else {
                entries.values[index].isPending = false
            }
            landed = true
        }
        if landed {
            let entries = entries
            pendingKeys.removeAll { entries[$0]?.isPending != true }
        }
    }

    /// Takes in a whole version of the file, the pending changes kept on top. Returns the keys whose value
    /// readers see changed, when `comparing` (else none: nobody to tell, no need to compare).
    mutating func replaceFileContents(with contents: [ExactKey: DefaultsValue], comparing: Bool) -> Set<ExactKey> {
        var changed = Set<ExactKey>()
        if comparing {
            var visible = contents
            for key in pendingKeys { visible[key] = entries[key]?.value }
            changed = SuiteStorage.changedKeys(from: values, to: visible)
        }
        var merged = contents.mapValues { Entry(value: $0, isPending: false) }
        for key in pendingKeys { merged[key] = entries[key] }
        entries = merged
        return changed
    }
}
