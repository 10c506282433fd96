import Foundation
import Synchronization

/// Writes a cloud store's state to its local copy in the background, so neither a write nor an upload
/// waits for the disk.
///
/// One serial queue per store writes the *latest* state: requests made while a save runs fold into one
/// more save. Two urgencies:
/// - ``saveSoon()`` (a local write: a value or a pending write this process changed): a save starts at
///   once, so a write is on disk one save after `set` returned (plus the save under way, if any). An etcd
///   store's waiting sync thread may take that save instead (``noteUnsaved()``, then ``flush()`` right
///   after it sends the upload), sparing a second thread's wake-up.
/// - ``saveEventually()`` (what the server has already: a server change from the watch, the last seen
///   revision, an upload's confirmation): folded into the next save, or written after ``bookkeepingDelay``
///   at the latest. Losing it to a crash costs a restarted store nothing it cannot get back: it reads the
///   namespace first (taking in the server changes), ignores replayed events at or below a key's known
///   revision, and the compare-and-swap recognises a confirmed write uploaded again.
///
/// A save that fails (disk full, no descriptor left, the slot replaced by a directory) is reported and tried
/// again after ``bookkeepingDelay`` until one succeeds, so a write reaches the disk once the problem is
/// gone even when no later write comes.
///
/// ``flush()`` writes what is outstanding and waits; the store calls it when released and, for every live
/// store, at process exit, so a write `set` returned from survives a normal exit.
final class CloudLocalCopySaver: Sendable {
    private struct Status {
        /// Some change is not on disk yet.
        var dirty = false
        /// A save is queued that will take in every change made until it starts.
        var queued = false
        /// A delayed save of bookkeeping is armed.
        var armed = false
    }

    /// How long bookkeeping may wait for the next save before it is written on its own.
    static let bookkeepingDelay: TimeInterval = 1

    let localCopy: CloudLocalCopy
    private let snapshot: @Sendable () -> CloudState
    private let finished = LockedCallback<DefaultsError?>()
    private let status = Locked(Status())
    private let queue = DispatchQueue(label: "ObservableDefaults.CloudKeyValueStore.saver")

    /// `snapshot` returns the state to write (called on the saver's queue, just before each save).
    init(localCopy: CloudLocalCopy, snapshot: @escaping @Sendable () -> CloudState) {
        self.localCopy = localCopy
        self.snapshot = snapshot
        CloudSaversAtExit.register(self)
    }

    /// Sets who hears each save's outcome (`nil`: written).
    func onSave(_ handler: @escaping @Sendable (DefaultsError?) -> Void) {
        finished.set(handler)
    }

    /// Saves the latest state as soon as the saver is free.
    func saveSoon() {
        let enqueue = status.withLock { status -> Bool in
            status.dirty = true
            defer { status.queued = true }
            return !status.queued
        }
        if enqueue { queue.async { [self] in saveIfDirty(endingQueued: true) } }
    }

    /// Marks the state as not saved without starting a save: for a caller that calls ``flush()`` itself
    /// right after (the sync thread that took a write's save), or else the next save or exit takes it in.
    func noteUnsaved() {
        status.withLock { $0.dirty = true }
    }

    /// Saves the latest state with the next ``saveSoon()``, or after ``bookkeepingDelay``.
    func saveEventually() {
        let arm = status.withLock { status -> Bool in
            status.dirty = true
            guard !status.queued, !status.armed else { return false }
            status.armed = true
            return true
        }
        if arm {
            queue.asyncAfter(deadline: .now() + Self.bookkeepingDelay) { [self] in
                status.withLock { $0.armed = false }
                saveIfDirty(endingQueued: false)
            }
        }
    }

    /// Writes whatever is not on disk yet and returns when it is (or the save failed, reported as usual).
    func flush() {
        queue.sync { saveIfDirty(endingQueued: false) }
    }

    /// Whether a change waits to be saved (for tests).
    var isDirty: Bool { status.withLock { $0.dirty } }

    private func saveIfDirty(endingQueued: Bool) {
        let save = status.withLock { status -> Bool in
            if endingQueued { status.queued = false }
            defer { status.dirty = false }
            return status.dirty
        }
        guard save else { return }
        let handler = finished.current
        do {
            try localCopy.save(snapshot())
            handler?(nil)
        } catch {
            handler?(error)
            // Still not on disk: the next save takes it in, or this retry when none comes first.
            saveEventually()
        }
    }
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
        for saver in savers.withLock({ $0.values.compactMap(\.saver) }) { saver.flush() }
    }
}
