import Foundation
@testable import ObservableDefaults
import TestSupport

/// A test's own ``FileWatcher`` whose event sources wrap a real inotify instance and add the faults a test
/// cannot cause for real: a directory the system refuses to watch (the watch limit would have to be lowered
/// for the whole machine), a queue overflow (more queued events than the system limit), a failed read.
/// Only the test's own files are registered with it, so tests running in parallel hear none of its faults.
final class WatchFaults: Sendable {
    private struct Faults {
        /// Directories whose watch fails, with the `errno`.
        var refused: [String: Int32] = [:]
        /// File names whose events are dropped, as if they never reached the watcher.
        var hidden: Set<String> = []
        /// The next read starts with an `IN_Q_OVERFLOW` event.
        var overflow = false
        /// The next read fails.
        var failRead = false
    }

    private let faults: Locked<Faults>
    /// The watcher; its reader thread lives as long as the process.
    let watcher: FileWatcher

    init() {
        let faults = Locked(Faults())
        self.faults = faults
        watcher = FileWatcher { () throws(SystemCallError) -> any WatchEventSource in try Source(faults: faults) }
    }

    /// A suite on the file `name` in `directory` watched by ``watcher`` (not the process's registry's).
    func suite(_ name: String, in directory: URL) throws -> DefaultsSuite {
        let fileURL = directory.appendingPathComponent(name + ".json").standardizedFileURL
        return DefaultsSuite(storage: try SuiteStorage(fileURL: fileURL, format: .json, watcher: watcher))
    }

    /// Watching `directory` fails with `errorNumber` until ``allow(_:)``.
    func refuse(_ directory: String, with errorNumber: Int32) {
        faults.withLock { $0.refused[directory] = errorNumber }
    }

    /// Watching `directory` works again (at the watcher's next retry).
    func allow(_ directory: String) { _ = faults.withLock { $0.refused.removeValue(forKey: directory) } }

    /// Drops every event about a file named `name` until ``show(_:)``.
    func hide(_ name: String) { _ = faults.withLock { $0.hidden.insert(name) } }

    /// Delivers events about files named `name` again.
    func show(_ name: String) { _ = faults.withLock { $0.hidden.remove(name) } }

    /// The reader thread reads an `IN_Q_OVERFLOW` next.
    func overflow() {
        faults.withLock { $0.overflow = true }
        watcher.wake()
    }

    /// The reader thread's next read fails (`EIO`).
    func failNextRead() {
        faults.withLock { $0.failRead = true }
        watcher.wake()
    }

    private final class Source: WatchEventSource {
        let inotify: Inotify
        let faults: Locked<Faults>

        init(faults: Locked<Faults>) throws(SystemCallError) {
            inotify = try Inotify()
            self.faults = faults
        }

        var pollable: Int32 { inotify.pollable }

        func addWatch(_ path: String, mask: Inotify.Mask) throws(SystemCallError) -> Int32 {
            if let errorNumber = faults.withLock({ $0.refused[path] }) {
                throw SystemCallError("inotify_add_watch", path: path, errno: Errno(rawValue: errorNumber))
            }
            return try inotify.addWatch(path, mask: mask)
        }

        func removeWatch(_ watch: Int32) { inotify.removeWatch(watch) }

        func drainEvents(into buffer: UnsafeMutableRawBufferPointer, _ body: (Inotify.Event) -> Void)
            throws(SystemCallError) -> Int
        {
            let (overflow, failRead, hidden) = faults.withLock { faults in
                defer { (faults.overflow, faults.failRead) = (false, false) }
                return (faults.overflow, faults.failRead, faults.hidden)
            }
            if failRead { throw SystemCallError("read", path: "", errno: .ioError) }
            if overflow { body(Inotify.Event(watch: -1, mask: .queueOverflowed, name: "")) }
            return try inotify.drainEvents(into: buffer) { event in
                if !hidden.contains(event.name) { body(event) }
            }
        }
    }
}
