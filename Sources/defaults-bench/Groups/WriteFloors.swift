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
///   watcher; and the same again with the temporary file where its writing makes no event the watcher
///   sees: in a subdirectory, or unnamed (`O_TMPFILE`) until it is linked just before the rename.
final class WriteFloors {
    static let memoryID = "floor.memory"
    static let unwatchedID = "floor.save"
    static let watchedIDs = ["floor.save.watched", "floor.save.watched.subdirectory", "floor.save.watched.unnamed"]

    typealias Row = (id: String, name: String, body: (Int) -> Int)

    let saveRows: [Row]
    let memoryRow: Row
    private let watchers: [RawDirectoryWatcher]

    /// - Parameter bytes: What each raw save writes (the benchmark suite's file, so the sizes match).
    init(_ context: BenchContext, bytes: [UInt8]) {
        let unwatched = RawSave(path: context.directory("floor-save").appendingPathComponent("write.json").path, bytes: bytes)
        let watchedDirectory = context.directory("floor-save-watched").path
        let watched = RawSave(path: watchedDirectory + "/write.json", bytes: bytes)
        let subdirectoryDirectory = context.directory("floor-save-watched-subdirectory").path
        let subdirectory = RawSave(path: subdirectoryDirectory + "/write.json", bytes: bytes, temporary: .subdirectory(".tmp"))
        let unnamedDirectory = context.directory("floor-save-watched-unnamed").path
        let unnamed = RawSave(path: unnamedDirectory + "/write.json", bytes: bytes, temporary: .unnamed)
        for save in [unwatched, watched, subdirectory, unnamed] { _ = save.save() }
        watchers = [watchedDirectory, subdirectoryDirectory, unnamedDirectory].map { RawDirectoryWatcher(directory: $0) }
        func loop(_ save: RawSave) -> (Int) -> Int {
            { n in
                var sum = 0
                for _ in 0..<n { sum &+= save.save() }
                return sum
            }
        }
        saveRows = [
            (Self.unwatchedID, "floor: raw save (our system calls, no library code), directory unwatched", loop(unwatched)),
            (Self.watchedIDs[0], "floor: raw save, directory watched by a raw inotify reader thread", loop(watched)),
            (Self.watchedIDs[1], "floor: raw save, temporary file in a subdirectory, directory watched by a raw inotify reader thread",
             loop(subdirectory)),
            (Self.watchedIDs[2], "floor: raw save, temporary file unnamed (`O_TMPFILE`, linked just before the rename), directory watched by a raw inotify reader thread",
             loop(unnamed)),
        ]

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
