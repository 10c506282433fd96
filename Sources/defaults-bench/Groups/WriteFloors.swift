import Foundation
import ObservableDefaults
import Synchronization

/// The floors of group 2 (issue 12), measured in the same run as the rows they bound:
///
/// - the least a persisted in-memory write can do: a plain `@Observable` write plus one `Mutex`-guarded
///   dictionary update of an enum value (what any store that keeps its values in memory must add);
/// - the least a write-through save costs: ``RawSave`` (our system calls, no library code) into an
///   unwatched directory, and the same into a directory a raw inotify reader thread watches
///   (``RawDirectoryWatcher``), which shows how much of a watched write's extra cost is the kernel waking a
///   watcher; and both again with the temporary file where its writing makes no event the watcher
///   sees: in a subdirectory, or unnamed (`O_TMPFILE`) until it is linked just before the rename.
final class WriteFloors {
    static let memoryID = "floor.memory"

    /// A way of saving, measured unwatched and watched: the watched row's ratio to the unwatched one is
    /// what watching costs that way of saving.
    struct SaveVariant {
        var id: String
        var temporary: RawSave.Temporary
        var description: String

        var unwatchedID: String { id }
        var watchedID: String { id + ".watched" }
    }

    static let saveVariants = [
        SaveVariant(id: "floor.save", temporary: .beside, description: "raw save (our system calls, no library code)"),
        SaveVariant(id: "floor.save.subdirectory", temporary: .subdirectory(".tmp"),
                    description: "raw save, temporary file in a subdirectory"),
        SaveVariant(id: "floor.save.unnamed", temporary: .unnamed,
                    description: "raw save, temporary file unnamed (`O_TMPFILE`, linked just before the rename)"),
    ]

    typealias Row = (id: String, name: String, body: (Int) -> Int)

    let saveRows: [Row]
    let memoryRow: Row
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
                let name = "floor: \(variant.description), directory " + (watched ? "watched by a raw inotify reader thread" : "unwatched")
                rows.append((id, name, loop(save)))
            }
        }
        saveRows = rows
        self.watchers = watchers

        let object = opaque(PlainSettings())
        let memory = opaque(FloorMemory())
        var counter = 0
        memoryRow = (Self.memoryID, "floor: plain `@Observable` write + one `Mutex`-guarded dictionary update of an enum value", { n in
            for _ in 0..<n {
                counter &+= 1
                object.count = counter
                memory.set(.integer(counter), forKey: BenchKeys.count)
            }
            return object.count &+ memory.count
        })
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

    var count: Int { values.withLock { $0.count } }
}
