/// A suite's memory: the file's contents (`base`) with this process's not-yet-written changes on top
/// (`changes`, in the order they were first made, with the position of each key's in `positions`; a `nil`
/// value for a removal).
///
/// A write looks its key up in `positions` first and updates the change in place when it is there: while a
/// key is written again and again before its change lands (inside a batch), each write hashes the key once,
/// and a writer that brings the ``PendingHandle`` its last write got back (a property of the macros does)
/// does not hash it at all. The file's version is taken in without copying or re-keying it (a large suite
/// opens at the cost of its parse), and what readers see is `base` itself while nothing is pending.
struct SuiteMemory {
    struct Change {
        let key: ExactKey
        var value: DefaultsValue?
    }

    /// The file's contents as memory last took them in, with the changes of this process that landed.
    private(set) var base: [ExactKey: DefaultsValue] = [:]
    /// The changes made here that are not in the file yet, appended as keys become pending.
    private var changes: [Change] = []
    /// The position of each pending key's change in `changes`.
    private var positions: [ExactKey: Int] = [:]

    /// What readers see for `key`.
    subscript(key: ExactKey) -> DefaultsValue? {
        if changes.isEmpty { return base[key] }
        if let position = positions[key] { return changes[position].value }
        return base[key]
    }

    /// What readers see: every key with a value.
    var values: [ExactKey: DefaultsValue] {
        if changes.isEmpty { return base }
        var values = base
        for change in changes { values[change.key] = change.value }
        return values
    }

    var hasPendingChanges: Bool { !changes.isEmpty }

    var pendingKeys: [ExactKey] { changes.map(\.key) }

    /// The pending changes by key (`nil` value: the key was removed), as a write of the file takes them.
    var pendingChanges: [ExactKey: DefaultsValue?] {
        Dictionary(uniqueKeysWithValues: changes.lazy.map { ($0.key, $0.value) })
    }

    func isPending(_ key: ExactKey) -> Bool { positions[key] != nil }

    /// A change made here (`nil` removes the key): memory takes it and it becomes pending. An equal value is
    /// left as it is (strings equal by canonical equivalence may differ in bytes, and memory keeps what the
    /// file holds). Returns whether memory changed.
    /// `value` is consumed: it is moved into the map, not copied.
    mutating func set(_ value: consuming DefaultsValue?, forKey key: ExactKey) -> Bool {
        var handle: PendingHandle?
        return set(value, forKey: key, handle: &handle)
    }

    /// ``set(_:forKey:)`` for a writer that keeps a ``PendingHandle`` between writes of the key: `handle` is
    /// the one it kept (or `nil`), and afterwards the one to keep (`nil` when the key is not pending: an equal
    /// value found in `base`). With a handle, the key is compared at its position before it is hashed.
    mutating func set(_ value: consuming DefaultsValue?, forKey key: ExactKey, handle: inout PendingHandle?) -> Bool {
        let position: Int
        if let kept = handle, kept.position < changes.count, changes[kept.position].key == key {
            position = kept.position
        } else if let found = positions[key] {
            position = found
            handle = PendingHandle(position: found)
        } else {
            if base[key] == value {
                handle = nil
                return false
            }
            handle = PendingHandle(position: changes.count)
            positions[key] = changes.count
            changes.append(Change(key: key, value: value))
            return true
        }
        if changes[position].value == value { return false }
        changes[position].value = value
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
        var landed = 0
        for (key, value) in written {
            guard let position = positions[key], changes[position].value == value else { continue }
            base[key] = value
            positions[key] = nil
            landed += 1
        }
        guard landed > 0 else { return }
        changes.removeAll { positions[$0.key] == nil }
        for (position, change) in changes.enumerated() { positions[change.key] = position }
    }

    /// What taking in a version of the file changed for readers (see ``takeIn(_:comparing:)``).
    struct Changes {
        /// Keys whose value changed because the file changed outside this process.
        var outsideChanges: Set<ExactKey> = []
        /// The key an ``SuiteFile/AtomicUpdate`` changed in memory.
        var updatedKey: ExactKey?
        /// The value an ``SuiteFile/AtomicUpdate`` stored, unless a newer change of the key is pending.
        var updatedValue: DefaultsValue?
        /// What readers saw before for each key changed (`outsideChanges` and `updatedKey`), when asked
        /// for (the suite's other layers decide with it whether the change shows).
        var previous: [ExactKey: DefaultsValue?] = [:]
    }

    /// Takes in a version of the file that parsed, read or written: the pending changes it wrote land, and
    /// the keys it changed take its values, except pending keys (written now, or changed again since), which
    /// keep memory's. `comparing`: whether a full re-read is compared key by key (someone is listening);
    /// otherwise none of its keys is reported (opening a large suite costs no comparison).
    /// `recordingPrevious`: keep what readers saw before for each changed key (``Changes/previous``).
    mutating func takeIn(_ version: AdoptedVersion, comparing: Bool, recordingPrevious: Bool = false) -> Changes {
        var changes = Changes()
        landed(version.written)
        if let changedKeys = version.changedKeys {
            // Only keys whose file value changed can differ from memory.
            for key in changedKeys where version.written[key] == nil && !isPending(key) && key != version.update?.key {
                let old = recordingPrevious ? base[key] : nil
                if adopt(version.contents[key], forKey: key) {
                    changes.outsideChanges.insert(key)
                    if recordingPrevious { changes.previous[key] = .some(old) }
                }
            }
        } else {
            let old = recordingPrevious ? values : [:]
            changes.outsideChanges = replaceFileContents(with: version.contents, comparing: comparing)
            if recordingPrevious { for key in changes.outsideChanges { changes.previous[key] = .some(old[key]) } }
        }
        // A change another thread made meanwhile (still pending) comes after the update.
        if let update = version.update, !isPending(update.key) {
            changes.updatedValue = update.value
            let old = recordingPrevious ? base[update.key] : nil
            if adopt(update.value, forKey: update.key) {
                changes.updatedKey = update.key
                if recordingPrevious { changes.previous[update.key] = .some(old) }
            }
        }
        return changes
    }

    /// Takes in a whole version of the file, the pending changes kept on top. Returns the keys whose value
    /// readers see changed, when `comparing` (else none: nobody to tell, no need to compare).
    mutating func replaceFileContents(with contents: [ExactKey: DefaultsValue], comparing: Bool) -> Set<ExactKey> {
        var changed = Set<ExactKey>()
        if comparing {
            var visible = contents
            for change in changes { visible[change.key] = change.value }
            changed = SuiteStorage.changedKeys(from: values, to: visible)
        }
        base = contents
        return changed
    }
}
