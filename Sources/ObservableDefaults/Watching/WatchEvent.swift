import Foundation

/// Identifies one ``FileWatcher/watch(file:onEvent:)`` registration; pass it to
/// ``FileWatcher/unwatch(_:)``.
struct WatchToken: Hashable, Sendable {
    let id: UInt64
}

/// What the watcher tells the owner of a watched file. Delivered on the watcher's thread (or, for the
/// watch set's changes, on the thread that changed it), never while the watcher holds its lock.
enum WatchEvent {
    /// Decides, once the file has been read, whether what was read may be applied (the watcher's check
    /// that no writer was still busy with the file). `suspect` is true when the file was absent, empty or
    /// did not parse: states a save in progress passes through. Returning `false` drops the read without
    /// changing anything; the watcher asks again later.
    typealias ReadGate = (_ suspect: Bool) -> Bool

    /// The file may have changed: check it, and ask `gate` before applying what was read.
    case fileMayHaveChanged(gate: ReadGate)
    /// The file's directory is not watched now (missing, or the system refused the watch), so outside
    /// changes are not seen until ``watchRestored(generation:)``. The error names the directory, not the
    /// file. `generation` orders these reports: one older than the last one acted on is out of date.
    case watchLost(DefaultsError, generation: UInt64)
    /// The file's directory is watched again (the file is checked too, as changes were missed).
    case watchRestored(generation: UInt64)
    /// The watcher's thread hit a failure (`poll`, `read`) and restarted; changes may have been missed
    /// meanwhile, so the file is checked too.
    case watcherFailed(DefaultsError)
}
