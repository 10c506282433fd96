/// Where ``FileWatcher``'s events come from: watches on directories, a descriptor to poll, and the
/// queued events. In production an ``Inotify`` instance; the watcher makes a new one after a failure.
protocol WatchEventSource: AnyObject, Sendable {
    /// The descriptor to poll for readability.
    var pollable: Int32 { get }
    /// Watches the directory at `path` for `mask`; returns the watch descriptor.
    func addWatch(_ path: String, mask: Inotify.Mask) throws(SystemCallError) -> Int32
    /// Ends a watch (one the kernel already ended is fine).
    func removeWatch(_ watch: Int32)
    /// Hands every queued event to `body`; returns how many reads that took.
    @discardableResult
    func drainEvents(into buffer: UnsafeMutableRawBufferPointer, _ body: (Inotify.Event) -> Void)
        throws(SystemCallError) -> Int
}

extension Inotify: WatchEventSource {}
