/// What a file's owner asks of a watcher: to be told about the file (see ``WatchEvent``) and to stop.
/// ``FileWatcher`` in production, through ``FileWatcher/shared``: one inotify instance per process.
protocol FileWatching: AnyObject, Sendable {
    /// Starts telling `onEvent` about the file at `file` (a path ending in `/`: about every name in that
    /// directory); `onEvent` may be called before this returns.
    func watch(file: String, onEvent: @escaping @Sendable (WatchEvent) -> Void) -> WatchToken
    /// Stops telling the registration of `token`.
    func unwatch(_ token: WatchToken)
}

extension FileWatcher: FileWatching {}
