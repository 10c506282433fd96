import Foundation
import Synchronization

/// What happens to changes a suite could not write (the file does not parse, the disk is full) when the
/// process exits or the suite is released: one last attempt to write them, and if that fails too, a
/// message on standard error naming the file, the keys and the reason, so no write is lost silently.
///
/// The exit status is left alone: a library that ends the process differently from how its program asked
/// would surprise more than it helps. Programs that must know call ``DefaultsSuite/flush()``, which throws.
enum PendingChangesAtExit {
    /// Set once the exit handler runs: from then on it reports every live storage itself, and storages
    /// released as it finishes stay quiet.
    private static let exiting = Atomic(false)
    private static let installed = Atomic(false)

    /// Registers the exit handler (once per process).
    static func install() {
        guard !installed.exchange(true, ordering: .relaxed) else { return }
        CurrentProcess.runAtExit {
            PendingChangesAtExit.exiting.store(true, ordering: .sequentiallyConsistent)
            for storage in SuiteRegistry.liveStorages { PendingChangesAtExit.attemptWrite(storage) }
        }
    }

    /// Called when a storage is released.
    static func writeOrReport(_ storage: SuiteStorage) {
        if exiting.load(ordering: .sequentiallyConsistent) { return }
        attemptWrite(storage)
    }

    private static func attemptWrite(_ storage: SuiteStorage) {
        guard storage.hasPendingChanges else { return }
        do {
            try storage.persist()
        } catch {
            let keys = storage.state.withLock { $0.memory.pendingKeys.sorted() }
            guard !keys.isEmpty else { return }
            let quoted = keys.map { "'\($0)'" }.joined(separator: ", ")
            let count = keys.count == 1 ? "1 change" : "\(keys.count) changes"
            let message =
                "ObservableDefaults: \(count) to \(storage.fileURL.path) could not be written and \(keys.count == 1 ? "is" : "are") lost (\(keys.count == 1 ? "key" : "keys") \(quoted)): \(error)\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
    }
}
