import Foundation

/// Hands out the one ``SuiteStorage`` per file in this process, so every handle on a file shares memory,
/// observers and the file watch. Storages are held weakly: one lives while a handle or an observation
/// token uses it.
enum SuiteRegistry {
    private struct WeakStorage {
        weak var storage: SuiteStorage?
    }

    /// A storage's file (by the exact bytes of its path: two names equal only by canonical equivalence are two
    /// files), its layers and where they are.
    private struct Key: Hashable {
        var path: ExactKey
        var layers: [DefaultsLayer]
        /// The places' number (``LayerPlaces/currentWithNumber()``), 0 for the file alone.
        var places: Int
    }

    private static let storages = Locked<[Key: WeakStorage]>([:])

    /// The storage of the file at `fileURL` read through `layers` (placed where the environment says now).
    ///
    /// Keyed by the file, the layers and their places: handles that ask for the same file with different
    /// layers get storages of their own, which see each other's writes as another process's (through the
    /// file, once watched or reloaded).
    static func storage(for fileURL: URL, format: SuiteFormat, layers: [DefaultsLayer] = [.file]) throws(DefaultsError)
        -> SuiteStorage
    {
        let places = layers == [.file] ? nil : LayerPlaces.currentWithNumber()
        let fileURL = fileURL.standardizedFileURL
        let key = Key(path: ExactKey(fileURL.path), layers: layers, places: places?.number ?? 0)
        return try storages.withLock { storages throws(DefaultsError) -> SuiteStorage in
            if let existing = storages[key]?.storage { return existing }
            let storage = try SuiteStorage(
                fileURL: fileURL, path: key.path.string, format: format, layers: layers,
                places: places?.places)
            storages[key] = WeakStorage(storage: storage)
            if storages.count > 64 { storages = storages.filter { $0.value.storage != nil } }
            return storage
        }
    }

    /// Every storage alive in this process.
    static var liveStorages: [SuiteStorage] {
        storages.withLock { $0.values.compactMap(\.storage) }
    }
}
