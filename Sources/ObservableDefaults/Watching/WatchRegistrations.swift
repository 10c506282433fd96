/// The files registered with the ``FileWatcher``, indexed by the names whose events concern them, so that
/// an inotify event finds its files without asking every registration (a process may watch hundreds of
/// suites, and each save of any of them in a shared directory is several events).
struct WatchRegistrations: Sequence {
    private var byToken: [WatchToken: FileWatcher.Registration] = [:]
    /// Registrations by each name they watch.
    private var byName: [FileWatcher.WatchedName: Set<WatchToken>] = [:]
    /// Symlinked registrations by each directory of their names: any event there may have re-pointed them.
    private var symlinksByDirectory: [String: Set<WatchToken>] = [:]

    var keys: Dictionary<WatchToken, FileWatcher.Registration>.Keys { byToken.keys }
    var values: Dictionary<WatchToken, FileWatcher.Registration>.Values { byToken.values }

    func makeIterator() -> Dictionary<WatchToken, FileWatcher.Registration>.Iterator { byToken.makeIterator() }

    subscript(token: WatchToken) -> FileWatcher.Registration? {
        get { byToken[token] }
        set {
            if let old = byToken[token] { unindex(old, token) }
            byToken[token] = newValue
            if let newValue { index(newValue, token) }
        }
    }

    @discardableResult
    mutating func removeValue(forKey token: WatchToken) -> FileWatcher.Registration? {
        defer { self[token] = nil }
        return byToken[token]
    }

    /// The registrations an event of `name` concerns: those watching that very name (`exact`), and the
    /// symlinked ones with a name in the same directory (`others`).
    func concerned(by name: FileWatcher.WatchedName) -> (exact: [WatchToken], others: [WatchToken]) {
        let exact = byName[name] ?? []
        let others = (symlinksByDirectory[name.directory] ?? []).subtracting(exact)
        return (Array(exact), Array(others))
    }

    private mutating func index(_ registration: FileWatcher.Registration, _ token: WatchToken) {
        for name in registration.names {
            byName[name, default: []].insert(token)
            if registration.isSymlink { symlinksByDirectory[name.directory, default: []].insert(token) }
        }
    }

    private mutating func unindex(_ registration: FileWatcher.Registration, _ token: WatchToken) {
        for name in registration.names {
            Self.remove(token, from: &byName[name])
            if registration.isSymlink { Self.remove(token, from: &symlinksByDirectory[name.directory]) }
        }
    }

    private static func remove(_ token: WatchToken, from tokens: inout Set<WatchToken>?) {
        tokens?.remove(token)
        if tokens?.isEmpty == true { tokens = nil }
    }
}
