import Foundation
import ObservableDefaults
import Synchronization

/// The floors of group 2 (issue 12), measured in the same run as the rows they bound:
///
/// - the least a persisted in-memory write can do: a plain `@Observable` write plus one `Mutex`-guarded
///   dictionary update of an enum value (what any store that keeps its values in memory must add);
/// - the least our design's in-memory write can do: that, plus the property's own copy of the stored form
///   behind its own `Mutex` (so reads never touch the shared map), compared before the write is announced
///   and stored under the map's lock (``FloorCopy``);
/// - the least a write-through save costs: ``RawSave`` (our system calls, no library code) into an
///   unwatched directory, and the same into a directory a raw inotify reader thread watches
///   (``RawDirectoryWatcher``), which shows how much of a watched write's extra cost is the kernel waking a
///   watcher. Three ways of saving are measured so: ours, the temporary file in a hidden subdirectory of
///   the suite's directory (its writing makes no event the watcher sees); the temporary file beside the
///   suite (ours before issue 12 row 2); and unnamed (`O_TMPFILE`) until it is linked just before the rename.
///   Ours is also measured watched by a reader that `stat`s the file at each event on its name
///   (``checkedWatchID``): the floor of a watcher that tells its own process's save from another's.
final class WriteFloors {
    static let memoryID = "floor.memory"
    static let copyID = "floor.memory.copy"
    /// Our way of saving (the first variant) into a directory whose reader `stat`s the file at each event on
    /// its name.
    static let checkedWatchID = saveVariants[0].watchedID + ".checked"

    /// A way of saving, measured unwatched and watched: the watched row's ratio to the unwatched one is
    /// what watching costs that way of saving.
    struct SaveVariant {
        var id: String
        var temporary: RawSave.Temporary
        var description: String

        var unwatchedID: String { id }
        var watchedID: String { id + ".watched" }
    }

    /// The first is our way of saving (the floor of `suite.writethrough`); the ids are kept from runs in
    /// which `floor.save` was ours.
    static let saveVariants = [
        SaveVariant(
            id: "floor.save.subdirectory", temporary: .subdirectory(".observable-defaults"),
            description: "raw save (our system calls, no library code: temporary file in the hidden subdirectory)"),
        SaveVariant(id: "floor.save", temporary: .beside, description: "raw save, temporary file beside the suite"),
        SaveVariant(
            id: "floor.save.unnamed", temporary: .unnamed,
            description: "raw save, temporary file unnamed (`O_TMPFILE`, linked just before the rename)")
    ]

    typealias Row = (id: String, name: String, body: (Int) -> Int)

    let saveRows: [Row]
    let memoryRow: Row
    let copyRow: Row
    private let watchers: [RawDirectoryWatcher]

    /// - Parameter bytes: What each raw save writes (the benchmark suite's file, so the sizes match).
    init(_ context: BenchContext, bytes: [UInt8]) {
        func loop(_ save: RawSave) -> (Int) -> Int {
            { n in
                var sum = 0
                for _ in 0..<n { sum &+= save.save() }
                return sum
            }
        }
        var rows: [Row] = [], watchers: [RawDirectoryWatcher] = []
        for variant in Self.saveVariants {
            for watched in [false, true] {
                let id = watched ? variant.watchedID : variant.unwatchedID
                let directory = context.directory(id).path
                let save = RawSave(path: directory + "/write.json", bytes: bytes, temporary: variant.temporary)
                _ = save.save()
                if watched { watchers.append(RawDirectoryWatcher(directory: directory)) }
                let name =
                    "floor: \(variant.description), directory "
                    + (watched ? "watched by a raw inotify reader thread" : "unwatched")
                rows.append((id, name, loop(save)))
            }
        }
        let ours = Self.saveVariants[0]
        let directory = context.directory(Self.checkedWatchID).path
        let save = RawSave(path: directory + "/write.json", bytes: bytes, temporary: ours.temporary)
        _ = save.save()
        watchers.append(RawDirectoryWatcher(directory: directory, checking: "write.json"))
        rows.append(
            (
                Self.checkedWatchID,
                "floor: \(ours.description), directory watched by a raw inotify reader thread that `stat`s the file at each event on its name",
                loop(save)
            ))
        saveRows = rows
        self.watchers = watchers

        let object = opaque(PlainSettings())
        let memory = opaque(FloorMemory())
        var counter = 0
        memoryRow = (
            Self.memoryID, "floor: plain `@Observable` write + one `Mutex`-guarded dictionary update of an enum value",
            { n in
                for _ in 0..<n {
                    counter &+= 1
                    object.count = counter
                    memory.set(.integer(counter), forKey: BenchKeys.count)
                }
                return object.count &+ memory.count
            }
        )
        let copy = opaque(FloorCopy())
        copyRow = (
            Self.copyID,
            "floor: the same + the property's own copy behind its own `Mutex`, compared before and stored with the update",
            { n in
                for _ in 0..<n {
                    counter &+= 1
                    let stored = DefaultsValue.integer(counter)
                    guard copy.differs(from: stored) else { continue }
                    object.count = counter
                    memory.set(stored, forKey: BenchKeys.count) { copy.store(stored) }
                }
                return object.count &+ memory.count
            }
        )
    }

    /// Ends the raw watchers' threads.
    func stop() {
        for watcher in watchers { watcher.stop() }
    }
}

/// The in-memory floor's store: values by key behind one lock.
final class FloorMemory: Sendable {
    private let values = Mutex<[String: DefaultsValue]>([:])

    @inline(never)
    func set(_ value: DefaultsValue, forKey key: String) {
        values.withLock { $0[key] = value }
    }

    /// ``set(_:forKey:)``, running `alongside` under the lock.
    @inline(never)
    func set(_ value: DefaultsValue, forKey key: String, alongside: () -> Void) {
        values.withLock {
            $0[key] = value
            alongside()
        }
    }

    var count: Int { values.withLock { $0.count } }
}

/// The copy floor's per-property copy: the stored form behind its own lock.
final class FloorCopy: Sendable {
    private let stored = Mutex<DefaultsValue?>(nil)

    @inline(never)
    func differs(from value: DefaultsValue) -> Bool { stored.withLock { $0 != value } }

    @inline(never)
    func store(_ value: DefaultsValue) { stored.withLock { $0 = value } }
}
