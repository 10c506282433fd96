import Foundation

/// The cluster, namespace and user a store's values came from: when the server's differs from the local
/// copy's, the account changed.
struct CloudAccount: Sendable, Equatable {
    var clusterID: String
    var namespace: String
    var user: String
}

/// A local write the server has not confirmed yet.
struct PendingWrite: Sendable, Equatable {
    /// The value to upload; `nil` removes the key.
    var value: DefaultsValue?
    /// The key's modification revision the write was based on (0: the key was absent); the upload is a
    /// compare-and-swap on it.
    var baseRevision: Int64
    /// Tells a newer write of the same key from the one being uploaded.
    var generation: Int
    /// The value's JSON text as uploaded (``CloudValueText``), encoded once when the write is made.
    var text: Data?
    /// The batch (``CloudKeyValueStore/performBatchUpdates(_:)``) the write is uploaded with, in one
    /// transaction with the other writes of the batch; `nil`: on its own.
    var batch: Int64?
    /// The `update(forKey:_:)` steps made locally (offline, or in a batch) that produced ``value``: at upload
    /// they run again on the server's value when another machine changed the key meanwhile, instead of
    /// losing to it (see `CloudState+Updates.swift`).
    var steps: [CloudUpdateStep] = []
    /// What ``steps`` ran on: the plain write with this generation (which loses a conflict like any plain
    /// write; the steps then run on the server's value), or `nil`: the server's value.
    var chainStart: Int?
    /// Read from a local copy: the write was made by `update(forKey:_:)` in an earlier process, whose steps
    /// ended with it. It is uploaded as a plain write, and reported when another machine's change wins.
    var madeByEndedUpdate = false

    /// Whether the write was made while the key was absent (based on revision 0): uploaded again after a
    /// deletion of the key, it would create the key anew.
    var createsKey: Bool { baseRevision == 0 }

    /// A write of `value`; `text` is its JSON text when the writer has it already (encoded here otherwise).
    init(value: DefaultsValue?, baseRevision: Int64, generation: Int, text: Data? = nil, batch: Int64? = nil) {
        self.value = value
        self.baseRevision = baseRevision
        self.generation = generation
        self.text = text ?? value.map(CloudValueText.encode)
        self.batch = batch
        chainStart = generation
    }

    /// Whether the write carries update steps to run again at upload.
    var hasSteps: Bool { !steps.isEmpty }

    /// The highest step id the write carries (0: none).
    var lastStep: Int { steps.last?.id ?? 0 }

    static func == (left: PendingWrite, right: PendingWrite) -> Bool {
        left.value == right.value && left.baseRevision == right.baseRevision && left.generation == right.generation
            && left.text == right.text && left.batch == right.batch && left.steps.map(\.id) == right.steps.map(\.id)
            && left.chainStart == right.chainStart && left.madeByEndedUpdate == right.madeByEndedUpdate
    }
}

/// Everything a cloud store knows, guarded by one lock: the values readers see, and for a syncing store
/// what the server confirmed and what is still to upload.
struct CloudState: Sendable {
    /// The values readers see; changed only through ``setValue(_:forKey:text:)``, which keeps ``sizes`` and
    /// ``totalBytes`` with them.
    private(set) var values: [String: DefaultsValue] = [:]
    /// The JSON size of each value (for the limits).
    private(set) var sizes: [String: Int] = [:]
    /// The sum of ``sizes``, kept as they change: checking the limits does not add them up on every write.
    private(set) var totalBytes = 0
    /// Each key's modification revision on the server as last seen (absent or deleted: no entry).
    var serverRevisions: [String: Int64] = [:]
    /// The highest revision of each key this store has seen or caused (deletions included): an event at or
    /// below it is old news. A deleted key's entry is forgotten once the watch is past it (see
    /// ``watchReached(_:)``).
    var knownRevisions: [String: Int64] = [:]
    /// ``knownRevisions`` is pruned when it holds this many entries (doubling with what a pass keeps).
    private var knownRevisionsPruneCount = 1_024
    var pending: [String: PendingWrite] = [:]
    /// The keys whose pending write was made while the key was absent (based on revision 0).
    var pendingCreates: Set<String> { Set(pending.lazy.filter { $0.value.createsKey }.map(\.key)) }
    /// The write being uploaded now, per key.
    var inFlight: [String: PendingWrite] = [:]
    /// The value an `update(forKey:_:)` sent to the server is uploading now, per key (its echo on the watch
    /// is not announced: the update's confirmation sets memory).
    var updateInFlight: [String: DefaultsValue?] = [:]
    /// The batch open now (``CloudKeyValueStore/performBatchUpdates(_:)``): writes join it, and it is not
    /// uploaded until it closes.
    var openBatch: Int64?
    /// How deep batches are nested now.
    var batchDepth = 0
    /// Numbers the update steps (``CloudUpdateStep/id``).
    var nextStep = 1
    /// Keys whose write made by an update of an earlier process lost to another machine's change, to be
    /// reported (see ``PendingWrite/madeByEndedUpdate``).
    var lostUpdates: [String] = []
    /// The highest server revision whose changes are all in `values` (the watch resumes after it).
    var lastRevision: Int64 = 0
    var account: CloudAccount?
    var nextGeneration = 1
    /// The local copy could not be read at start and is not taken in yet: a write counts even when memory
    /// holds its value already (a removal of a key memory never had), and goes to ``writtenBeforeCopyRead``,
    /// so the copy's value does not come back over it (see ``takeInLateCopy(_:)``).
    var localCopyUnread = false
    /// The keys this process wrote while ``localCopyUnread``.
    var writtenBeforeCopyRead: Set<String> = []
    /// When each key's local write that `values` still holds was made (wall clock, nanoseconds since
    /// 1970), by this process or by one whose local copy it took over: orders the writes of one key made
    /// by several processes sharing a local copy (see ``takeIn(sibling:adoptingWrites:)``). A server value
    /// from elsewhere that replaces the write drops its entry.
    var writeTimes: [String: Int64] = [:]

    /// Stores `value` (`nil` removes) for `key` in memory only; `text` is its JSON text when the caller
    /// has it already (encoded here otherwise, for its size). Returns whether the value changed: storing the
    /// value the key holds changes nothing, its recorded size included. One lookup per dictionary.
    @discardableResult
    mutating func setValue(_ value: DefaultsValue?, forKey key: String, text: Data? = nil) -> Bool {
        guard Self.replace(&values[key], with: value) else { return false }
        let size = value.map { text?.count ?? CloudValueText.encode($0).count }
        let replaced = Self.exchange(&sizes[key], with: size)
        totalBytes += (size ?? 0) - (replaced ?? 0)
        return true
    }

    private static func replace(_ slot: inout DefaultsValue?, with value: DefaultsValue?) -> Bool {
        guard slot != value else { return false }
        slot = value
        return true
    }

    private static func exchange(_ slot: inout Int?, with size: Int?) -> Int? {
        defer { slot = size }
        return slot
    }

    /// Now on the wall clock, in nanoseconds since 1970: the time of a local write (``writeTimes``).
    static func wallClockNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// A server value for `key` at `revision` seen outside this store's own uploads (a watch event, a
    /// re-read, the answer to a refused upload); `text` is its JSON text as the server holds it (its size
    /// is recorded without encoding the value again). The server wins over a pending write based on an
    /// older revision. Returns whether the value readers see changed.
    mutating func applyServerValue(_ value: DefaultsValue?, forKey key: String, revision: Int64, text: Data? = nil)
        -> Bool
    {
        // A store with no write of its own under way (an observer's usual case) looks the key up in neither
        // `pending` nor `updateInFlight`: on a watch event each lookup is a hash and a cold cache line or two.
        let writing = !pending.isEmpty
        let known = knownRevisions.index(forKey: key)
        // Seen already, or caused by this store.
        if let known, revision <= knownRevisions.values[known] { return false }
        if !updateInFlight.isEmpty, !writing || pending[key] == nil, let sent = updateInFlight[key], sent == value {
            // The echo of an update being confirmed: its confirmation sets memory. Not recorded as known, so
            // that the value is still taken in if the update ends otherwise.
            return false
        }
        if let known { knownRevisions.values[known] = revision } else { knownRevisions[key] = revision }
        if writing, let write = pending[key] {
            if let upload = inFlight[key], upload.value == value {
                // The echo of our own upload, seen before its answer: later writes build on it.
                pending[key]?.baseRevision = value == nil ? 0 : revision
                serverRevisions[key] = value == nil ? nil : revision
                return false
            }
            if write.hasSteps {
                // Update steps run again on the server's value when they are uploaded (the compare-and-swap
                // fails on the old base): memory keeps the local result until then.
                serverRevisions[key] = value == nil ? nil : revision
                return false
            }
            if revision > write.baseRevision { dropPending(key) }  // another writer was first: the server wins
        }
        serverRevisions[key] = value == nil ? nil : revision
        if writing, pending[key] != nil { return false }
        if !writeTimes.isEmpty { writeTimes[key] = nil }
        return setValue(value, forKey: key, text: text)
    }

    /// Drops the pending write of `key` because another machine's change wins over it; a write made by an
    /// update of an earlier process (whose steps could have run again) is noted in ``lostUpdates``.
    mutating func dropPending(_ key: String) {
        if pending.removeValue(forKey: key)?.madeByEndedUpdate == true { lostUpdates.append(key) }
    }

    /// Every change up to `revision` is applied: a watch message, or a read of the whole namespace.
    mutating func watchReached(_ revision: Int64) {
        lastRevision = max(lastRevision, revision)
        forgetPassedDeletions()
    }

    /// Forgets the revisions of keys that are gone from the server once the watch is past them. No change at
    /// or below ``lastRevision`` is applied again: the watch resumes after it, and a restarted store, whose
    /// local copy keeps only the revisions of keys that exist, relies on the same. Without this, a store
    /// whose keys come and go would hold an entry for every key it ever saw. A pass runs only when the
    /// entries have doubled since the last one, so its cost is spread over the changes that added them.
    private mutating func forgetPassedDeletions() {
        guard knownRevisions.count >= knownRevisionsPruneCount else { return }
        knownRevisions = knownRevisions.filter { key, revision in
            revision > lastRevision || serverRevisions[key] != nil || pending[key] != nil || inFlight[key] != nil
        }
        knownRevisionsPruneCount = max(1_024, knownRevisions.count * 2)
    }

    /// This store's upload of `write` for `key` was written at `revision`. A newer state of the key known
    /// already (an update of this store confirmed first) is kept.
    mutating func confirmUpload(_ write: PendingWrite, forKey key: String, revision: Int64) {
        inFlight[key] = nil
        let newest = revision >= knownRevisions[key] ?? 0
        knownRevisions[key] = max(knownRevisions[key] ?? 0, revision)
        if newest { serverRevisions[key] = write.value == nil ? nil : revision }
        if pending[key]?.generation == write.generation {
            pending[key] = nil
        } else if newest {
            pending[key]?.baseRevision = write.value == nil ? 0 : revision
        }
    }

    /// Takes in the server's whole namespace as read at `revision`, each value with its JSON text (keys in
    /// `undecodable` are left as they are); returns the keys whose value changed.
    mutating func applySnapshot(
        _ server: [String: (value: DefaultsValue, revision: Int64, text: Data?)], at revision: Int64,
        undecodable: Set<String> = []
    ) -> Set<String> {
        var changed = Set<String>()
        for key in Set(server.keys).union(values.keys).union(pending.keys) where !undecodable.contains(key) {
            let remote = server[key]
            if let remote { knownRevisions[key] = max(knownRevisions[key] ?? 0, remote.revision) }
            serverRevisions[key] = remote?.revision
            if let write = pending[key], (remote?.revision ?? 0) == write.baseRevision || write.hasSteps {
                continue  // unchanged since the write was made, or update steps to run on the server's value: uploaded
            }
            dropPending(key)
            if setValue(remote?.value, forKey: key, text: remote?.text) {
                writeTimes[key] = nil
                changed.insert(key)
            }
        }
        watchReached(revision)
        return changed
    }
}
