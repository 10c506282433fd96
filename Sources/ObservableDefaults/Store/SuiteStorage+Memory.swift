/// A suite's memory: the file's contents (`base`) with this process's not-yet-written changes on top
/// (`pending`, `nil` for a removal).
///
/// A write looks its key up in `pending` first and updates the entry in place when it is there: while a key
/// is written again and again before its change lands (inside a batch), each write hashes the key once. The
/// file's version is taken in without copying or re-keying it (a large suite opens at the cost of its
/// parse), and what readers see is `base` itself while nothing is pending.
struct SuiteMemory {
    /// The file's contents as memory last took them in, with the changes of this process that landed.
    private(set) var base: [ExactKey: DefaultsValue] = [:]
    /// The changes made here that are not in the file yet (`nil` value: the key was removed).
    private(set) var pending: [ExactKey: DefaultsValue?] = [:]

    /// What readers see for `key`.
    subscript(key: ExactKey) -> DefaultsValue? {
        if pending.isEmpty { return base[key] }
        if let change = pending[key] { return change }
        return base[key]
    }

    /// What readers see: every key with a value.
    var values: [ExactKey: DefaultsValue] {
        if pending.isEmpty { return base }
        var values = base
        for (key, change) in pending { values[key] = change }
        return values
    }

    var hasPendingChanges: Bool { !pending.isEmpty }

    var pendingKeys: [ExactKey] { Array(pending.keys) }

    func isPending(_ key: ExactKey) -> Bool { pending[key] != nil }

    /// A change made here (`nil` removes the key): memory takes it and it becomes pending. An equal value is
    /// left as it is (strings equal by canonical equivalence may differ in bytes, and memory keeps what the
    /// file holds). Returns whether memory changed.
    /// `value` is consumed: it is moved into the map, not copied.
    mutating func set(_ value: consuming DefaultsValue?, forKey key: ExactKey) -> Bool {
        if let index = pending.index(forKey: key) {
            if pending.values[index] == value { return false }
            pending.values[index] = value
            return true
        }
        if base[key] == value { return false }
        pending[key] = .some(value)
        return true
    }

    /// The file's value for a key that is not pending (a change from outside, or an atomic update's result).
    /// Returns whether memory changed.
    mutating func adopt(_ value: DefaultsValue?, forKey key: ExactKey) -> Bool {
        if base[key] == value { return false }
        base[key] = value
        return true
    }

    /// A write put `written` in the file: a pending change it wrote lands in `base` and is pending no more
    /// (a key changed again since stays pending).
    mutating func landed(_ written: [ExactKey: DefaultsValue?]) {
        for (key, value) in written {
            guard let index = pending.index(forKey: key), pending.values[index] == value else { continue }
            pending.remove(at: index)
            base[key] = value
        }
    }

    /// Takes in a whole version of the file, the pending changes kept on top. Returns the keys whose value
    /// readers see changed, when `comparing` (else none: nobody to tell, no need to compare).
    mutating func replaceFileContents(with contents: [ExactKey: DefaultsValue], comparing: Bool) -> Set<ExactKey> {
        var changed = Set<ExactKey>()
        if comparing {
            var visible = contents
            for (key, change) in pending { visible[key] = change }
            changed = SuiteStorage.changedKeys(from: values, to: visible)
        }
        base = contents
        return changed
    }
}
