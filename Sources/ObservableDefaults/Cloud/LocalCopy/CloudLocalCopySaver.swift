import Foundation
import Synchronization

/// Writes a cloud store's state to its local copy in the background, so neither a write nor an upload
/// waits for the disk.
///
/// Its one entry point is ``save(_:)``: the caller says what changed (``Change``), the saver decides how
/// it reaches the disk. One serial queue per store does the writing; requests made while it is busy fold
/// into one more step. Three urgencies:
/// - ``Change/localWrite(_:)``: the key's entry is appended to the copy's journal at once
///   (as soon as the saver is free), one short record whatever the size of the store, so a write is on disk
///   one append after `set` returned (plus the step under way, if any). While the whole state is small
///   (``CloudLocalCopy/wholeSavesAreSmall``), the whole save is written at once instead: it costs no more,
///   and an append was measurably slower for a write's propagation on the test machine. An etcd store's waiting sync thread
///   may take that append instead (``Change/localWriteFlushedByCaller(_:)``, then ``flushUnconfirmed()`` once
///   the upload is answered or late), sparing a second thread's wake-up; a write the server confirmed by then
///   is not recorded at all (``Change/uploadConfirmed(_:)``). A whole save follows within ``bookkeepingDelay``: armed
///   by the record itself in a store without a server (`wholeSaveAfterRecords`), else by the write's
///   confirmation or refusal (arming a timer at write time woke a dispatch thread while the member worked
///   on the upload: 2–3% of a write's propagation, `Docs/benchmarks.md`).
/// - ``Change/wholeStateNow`` (a read of the whole namespace, a write the server refused): a whole save at
///   once.
/// - ``Change/wholeStateEventually`` (what the server has already: a server change from the watch, the last seen
///   revision, an upload's confirmation): folded into the next whole save, written after
///   ``bookkeepingDelay`` at the latest. Losing it to a crash costs a restarted store nothing it cannot get
///   back: it reads the namespace first (taking in the server changes), ignores replayed events at or below
///   a key's known revision, and the compare-and-swap recognises a confirmed write uploaded again.
///
/// A save or append that fails (disk full, no descriptor left, the file replaced by a directory) is
/// reported, and a whole save is tried again after ``bookkeepingDelay`` until one succeeds, so a write
/// reaches the disk once the problem is gone even when no later write comes.
///
/// A copy that could not be read at start for a reason that may pass (``CloudLocalCopy/awaitsLoad``) is read
/// again at every step, and at least every ``bookkeepingDelay``, before anything is written to it; once
/// read, it goes to ``onLateLoad(_:)``, and a whole save follows.
///
/// ``flush()`` appends what local writes are outstanding, confirmed ones too, and waits (``synchronize()``);
/// ``flushAll()`` writes a whole save of what is outstanding and waits: the store calls it when released
/// and, for every live store, at process exit, so a write `set` returned from survives a normal exit.
final class CloudLocalCopySaver: Sendable {
    private struct Status {
        /// Keys written locally whose entries are in no record or save yet.
        var unrecorded: Set<String> = []
        /// Keys written locally whose record was skipped as the server confirmed the write: the next whole save
        /// takes them in, ``flush()`` records them.
        var confirmed: Set<String> = []
        /// Keys whose entry on disk may be a pending write made while the key was absent (based on revision 0;
        /// more keys, never fewer). A store restarted after a crash uploads such a write again, and it creates
        /// the key anew if it was deleted meanwhile (a pending write based on a revision the key has passed is
        /// dropped by that store's first read instead): a newer write of one of these keys is saved before it
        /// is sent, and recorded once confirmed.
        var createsOnDisk: Set<String>
        /// A whole save is due at once (the state took in a copy read late or another process's copy, or much
        /// changed): until it is written, the disk may hold a pending create of any key.
        var diskUnknown: Bool
        /// Some change is not in a whole save yet.
        var dirty = false
        /// A whole save is wanted at once.
        var urgent = false
        /// A step is queued that will take in every change made until it starts.
        var queued = false
        /// A delayed whole save is armed.
        var armed = false
    }

    /// What one step of the saver writes.
    private enum Step: Equatable {
        /// A queued step: the urgent whole save, or else the records of local writes.
        case queued
        /// The same, asked for by ``flush()`` (`includingConfirmed`) or ``flushUnconfirmed()``.
        case flush(includingConfirmed: Bool)
        /// The delayed whole save (bookkeeping, compaction of the journal, a retry).
        case delayed
        /// A whole save of whatever is outstanding (``flushAll()``).
        case everything
    }

    /// How long a change may wait before a whole save takes it in.
    static let bookkeepingDelay: TimeInterval = 1

    /// This process's copy and the others of the store (see ``CloudLocalCopyShare``).
    let share: CloudLocalCopyShare
    private var localCopy: CloudLocalCopy { share.own }
    private let state: Locked<CloudState>
    /// Whether a record arms the delayed whole save itself (no server confirms the write).
    private let wholeSaveAfterRecords: Bool
    private let finished = LockedCallback<DefaultsError?>()
    private let lateLoad = LockedCallback<CloudLateLoad>()
    private let status: Locked<Status>
    private let queue = DispatchQueue(label: "ObservableDefaults.CloudKeyValueStore.saver")

    /// `state` is the store's state, read under its lock for each save and record.
    init(share: CloudLocalCopyShare, state: Locked<CloudState>, wholeSaveAfterRecords: Bool) {
        self.share = share
        self.state = state
        self.wholeSaveAfterRecords = wholeSaveAfterRecords
        status = Locked(
            Status(createsOnDisk: state.withLock { $0.pendingCreates }, diskUnknown: share.own.awaitsLoad))
        CloudSaversAtExit.register(self)
    }

    /// Sets who hears each save's outcome (`nil`: written).
    func onSave(_ handler: @escaping @Sendable (DefaultsError?) -> Void) {
        finished.set(handler)
    }

    /// Sets who takes in a copy that awaited its load, and hears each failed attempt to read it.
    func onLateLoad(_ handler: @escaping @Sendable (CloudLateLoad) -> Void) {
        lateLoad.set(handler)
    }

    /// What changed in the store's state, for ``save(_:)``.
    enum Change {
        /// This process wrote `key`: its entry is appended to the journal as soon as the saver is free.
        case localWrite(String)
        /// This process wrote `key`, and the caller calls ``flushUnconfirmed()`` itself soon (the sync thread
        /// that took the write's save): the write is marked as not on disk, and no step is started for it
        /// (else the next step, or the exit, takes it in).
        case localWriteFlushedByCaller(String)
        /// The state took in the whole namespace, or a write the server refused, or another process's
        /// copy: a whole save as soon as the saver is free.
        case wholeStateNow
        /// Only what the server already has changed (a server change, the last seen revision, a confirmed
        /// upload), which a crash may lose harmlessly: folded into the next whole save, within
        /// ``bookkeepingDelay``.
        case wholeStateEventually
        /// The server confirmed this process's write of `key`, and no newer write of it waits: as
        /// ``wholeStateEventually``, and the write's record, if not written yet, is skipped (the server holds
        /// the write; a restarted store reads it from there), unless the disk may hold a pending write that
        /// created the key (``mayHoldPendingCreate(of:)``, which the sync thread also saves such a key's next
        /// write before sending it by): then the key is recorded at once, as a restarted store would upload that
        /// write again. Sent under the state's lock, so that a newer write of the key keeps its record.
        case uploadConfirmed(String)
    }

    /// Writes `change` to the local copy as it needs (see the urgencies above), without blocking the caller.
    func save(_ change: Change) {
        switch change {
        case .localWrite(let key):
            if note(key, queueing: true) { queue.async { [self] in run(.queued) } }
        case .localWriteFlushedByCaller(let key):
            note(key, queueing: false)
        case .wholeStateNow:
            saveSoon()
        case .wholeStateEventually:
            saveEventually()
        case .uploadConfirmed(let key):
            let recordNow = status.withLock { status -> Bool in
                guard status.diskUnknown || status.createsOnDisk.contains(key) else {
                    if status.unrecorded.remove(key) != nil { status.confirmed.insert(key) }
                    return false
                }
                return true
            }
            // The confirmed state replaces the pending create on disk at once, not with the next whole save.
            if recordNow { save(.localWrite(key)) }
            saveEventually()
        }
    }

    /// Notes the write of `key` (and, `queueing`, that a step is queued for it), arming the delayed whole
    /// save where a record arms it; returns whether the step must be queued now.
    @discardableResult
    private func note(_ key: String, queueing: Bool) -> Bool {
        let enqueue = status.withLock { status -> Bool in
            status.unrecorded.insert(key)
            status.dirty = true
            guard queueing else { return false }
            defer { status.queued = true }
            return !status.queued
        }
        if wholeSaveAfterRecords { armIfNeeded() }
        return enqueue
    }

    /// Whether the entry of `key` on disk may be a pending write made while the key was absent: then a newer
    /// write of it must reach the disk before its upload is sent (see ``Change/uploadConfirmed(_:)``).
    func mayHoldPendingCreate(of key: String) -> Bool {
        status.withLock { $0.diskUnknown || $0.createsOnDisk.contains(key) }
    }

    /// Writes a whole save as soon as the saver is free.
    private func saveSoon() {
        let enqueue = status.withLock { status -> Bool in
            status.dirty = true
            status.urgent = true
            status.diskUnknown = true
            defer { status.queued = true }
            return !status.queued
        }
        if enqueue { queue.async { [self] in run(.queued) } }
    }

    /// Takes in the latest state with the next whole save, within ``bookkeepingDelay``.
    private func saveEventually() {
        status.withLock { $0.dirty = true }
        armIfNeeded()
    }

    /// Arms the delayed whole save unless it is armed already.
    private func armIfNeeded() {
        let arm = status.withLock { status -> Bool in
            guard !status.armed else { return false }
            status.armed = true
            return true
        }
        if arm {
            // Not `asyncAfter`: see DelayedWork (a store that starts without descriptors relies on this).
            DelayedWork.shared.after(.seconds(Self.bookkeepingDelay), on: queue) { [self] in
                status.withLock { $0.armed = false }
                run(.delayed)
            }
        }
    }

    /// Appends the local writes not on disk yet, confirmed ones too (or writes the urgent whole save), and
    /// returns when they are (or it failed, reported as usual).
    func flush() {
        queue.sync { run(.flush(includingConfirmed: true)) }
    }

    /// ``flush()``, leaving the writes the server confirmed to the next whole save: the save of writes a
    /// thread took over (``Change/localWriteFlushedByCaller(_:)``).
    func flushUnconfirmed() {
        queue.sync { run(.flush(includingConfirmed: false)) }
    }

    /// Writes a whole save if anything is outstanding and returns when it is on disk (or failed).
    func flushAll() {
        queue.sync { run(.everything) }
    }

    private func run(_ step: Step) {
        if localCopy.awaitsLoad, !loadAwaitedCopy() {
            if step == .queued { status.withLock { $0.queued = false } }
            saveEventually()  // read again after the delay, even when nothing else comes
            return
        }
        let small = localCopy.wholeSavesAreSmall
        let (keys, whole) = status.withLock { status -> (Set<String>, Bool) in
            if step == .queued { status.queued = false }
            var keys = status.unrecorded
            // A record written anyway takes the confirmed writes along.
            if step == .flush(includingConfirmed: true) || !keys.isEmpty { keys.formUnion(status.confirmed) }
            status.unrecorded = []
            let wholeNow = status.urgent || step == .delayed || step == .everything || (small && !keys.isEmpty)
            guard status.dirty, wholeNow else {
                if !keys.isEmpty { status.confirmed = [] }
                return (keys, false)
            }
            (status.dirty, status.urgent, status.confirmed) = (false, false, [])
            return ([], true)
        }
        guard whole || !keys.isEmpty else { return }
        let handler = finished.current
        do {
            if whole {
                try saveWhole()
            } else {
                try appendRecords(of: keys)
            }
            handler?(nil)
        } catch {
            handler?(error)
            // Still not on disk: a whole save takes it in, on its own after the delay if nothing comes first.
            saveEventually()
        }
    }

    /// Writes the whole state and notes which keys it holds as pending creates. They are noted with the state's
    /// lock held, before writing: a write confirmed meanwhile is recorded.
    private func saveWhole() throws(DefaultsError) {
        let (saved, creates) = state.withLock { state in
            let creates = state.pendingCreates
            status.withLock { $0.createsOnDisk.formUnion(creates) }
            return (state, creates)
        }
        try share.save(saved)
        status.withLock { status in
            // Exact now, unless a copy taken in since asks for another whole save.
            guard !status.urgent else { return }
            (status.createsOnDisk, status.diskUnknown) = (creates, false)
        }
    }

    /// Appends the records of `keys` (a whole save follows at once when the journal has grown enough).
    private func appendRecords(of keys: Set<String>) throws(DefaultsError) {
        let (content, settled) = state.withLock { state in
            let creates = keys.filter { state.pending[$0]?.createsKey == true }
            status.withLock { $0.createsOnDisk.formUnion(creates) }
            return (CloudLocalCopyJournal.content(of: keys, in: state), keys.subtracting(creates))
        }
        if try share.append(content) { saveSoon() }
        status.withLock { $0.createsOnDisk.subtract(settled) }
    }

    /// Reads the copy that awaits its load and hands it over; a whole save of the result is due then.
    /// Returns whether it was read.
    private func loadAwaitedCopy() -> Bool {
        var problems: [DefaultsError] = []
        var loaded: CloudState?
        do { loaded = try share.load { problems.append($0) } } catch { problems.append(error) }
        let read = !localCopy.awaitsLoad
        if read { status.withLock { ($0.dirty, $0.urgent, $0.diskUnknown) = (true, true, true) } }
        lateLoad.current?(CloudLateLoad(state: loaded, problems: problems, read: read))
        return read
    }
}

/// A local copy read after its store started without it (see ``CloudLocalCopySaver/onLateLoad(_:)``), or
/// one more failed attempt.
struct CloudLateLoad: Sendable {
    /// What the copy holds (`nil`: nothing usable, or not read).
    var state: CloudState?
    /// What reading it found wrong; when not ``read``, the last is why.
    var problems: [DefaultsError]
    /// Whether it was read; if not, it still awaits its load.
    var read: Bool
}

/// Flushes every live store's local copy when the process exits normally (`exit`, the end of `main`).
enum CloudSaversAtExit {
    private struct Entry { weak var saver: CloudLocalCopySaver? }
    private static let savers = Locked<[ObjectIdentifier: Entry]>([:])
    private static let installed = Atomic(false)

    static func register(_ saver: CloudLocalCopySaver) {
        if !installed.exchange(true, ordering: .relaxed) {
            CurrentProcess.runAtExit { CloudSaversAtExit.flushAll() }
        }
        savers.withLock { savers in
            savers = savers.filter { $0.value.saver != nil }
            savers[ObjectIdentifier(saver)] = Entry(saver: saver)
        }
    }

    private static func flushAll() {
        for saver in savers.withLock({ $0.values.compactMap(\.saver) }) { saver.flushAll() }
    }
}
