import Foundation

/// Hands out the one ``SuiteStorage`` per file in this process, so every handle on a file shares memory,
/// observers and the file watch. Storages are held weakly: one lives while a handle or an observation
/// token uses it.
enum SuiteRegistry {
    private struct WeakStorage {
        weak var storage: SuiteStorage?
    }

    // Keyed by the exact bytes of the path: two names equal only by canonical equivalence are two files.
    private static let storages = Locked<[ExactKey: WeakStorage]>([:])

    static func storage(for fileURL: URL, format: SuiteFormat) throws(DefaultsError) -> SuiteStorage {
        let key = ExactKey(fileURL.standardizedFileURL.path)
        return try storages.withLock { storages throws(DefaultsError) -> SuiteStorage in
            if let existing = storages[key]?.storage { return existing }
            let storage = try SuiteStorage(fileURL: fileURL.standardizedFileURL, format: format)
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
