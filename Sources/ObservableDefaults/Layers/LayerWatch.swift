import Synchronization

/// The watch on one live layer source (a layer file, a key-per-file directory, a cloud store's keys),
/// shared by every suite of the process watching it, looked up by ``Key`` (a layer file: its layer,
/// directory and name).
///
/// Made when the first suite starts watching the source, and reference-counted by its watching suites: the
/// process's table holds it while one does, so it goes away, and its watch with it, when the last one stops
/// watching or is released. A change is read once and applied to every watching suite, which each tell
/// their own observers and their own error channel.
final class LayerWatch: Sendable {
    /// What a watch is shared by.
    enum Key: Hashable, Sendable {
        case file(LayerFile.Key)
        /// A key-per-file directory, by path.
        case keyPerFile(String)
        /// A cloud store, by identity, and the key prefix.
        case cloud(ObjectIdentifier, prefix: String)
    }

    let key: Key
    /// What is read when the source changes.
    let source: LayerSource
    /// The suites watching the source, and the watch or observation that tells it about changes.
    private let watching = Mutex(Watching())

    private init(_ source: LayerSource, key: Key) {
        self.source = source
        self.key = key
    }

    // MARK: The process's watches

    /// The watches with a suite watching them, by key.
    private static let table = Mutex<[Key: LayerWatch]>([:])

    /// The watches alive now, for tests and diagnostics.
    static var live: [LayerWatch] {
        table.withLock { Array($0.values) }
    }

    /// Locks that serialize reading a source and applying what was read, by the source's key (a few
    /// stripes, made once: a lock per source would be an object made whenever a suite opens).
    private static let stripes = (0..<16).map { _ in Locked(()) }

    /// The lock under which the source of `key` is read and applied.
    static func reading(_ key: Key) -> Locked<Void> {
        stripes[Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))]
    }

    // MARK: Subscribers

    /// A suite watching the source, at position `index` among its layers.
    private struct Subscriber {
        weak var storage: SuiteStorage?
        let id: ObjectIdentifier
        let index: Int
        /// The registration that tells it (see ``Watching/channels``).
        let channel: ObjectIdentifier
    }

    /// What tells the watch about changes, for the subscribers of one channel: watch tokens of one
    /// watcher, or the cloud store's observation.
    private struct Registration {
        var watcher: (any FileWatching)?
        var tokens: [WatchToken] = []
        var observation: DefaultsObservation?

        func cancel() {
            for token in tokens { watcher?.unwatch(token) }
            observation?.cancel()
        }
    }

    private enum Channel {
        /// Being made, outside the locks; `latecomers`: a suite subscribed meanwhile, and is brought up to
        /// date once it is made (a change between its read and the watch would be missed otherwise).
        case making(latecomers: Bool)
        case made(Registration)
    }

    private struct Watching {
        var subscribers: [Subscriber] = []
        /// One per watcher (a cloud source: one for its store), while a subscriber uses it.
        var channels: [ObjectIdentifier: Channel] = [:]

        func targets(_ channel: ObjectIdentifier) -> [(storage: SuiteStorage, index: Int)] {
            subscribers.compactMap { subscriber in
                guard subscriber.channel == channel, let storage = subscriber.storage else { return nil }
                return (storage, subscriber.index)
            }
        }
    }

    /// Starts telling `storage` about changes of its layer source `index`: the first suite of the process
    /// makes the watch, the first of each watcher its registration. The watcher is called with none of the
    /// watches' locks held: it may call back at once, and a callback may release the last reference to a
    /// suite, whose deinit unsubscribes.
    static func subscribe(_ storage: SuiteStorage, index: Int) {
        let source = storage.layerSources[index]
        guard let key = source.watchKey else { return }
        let channel: ObjectIdentifier
        if case .cloud(let store, _) = source.kind {
            channel = ObjectIdentifier(store)
        } else {
            channel = ObjectIdentifier(storage.watcher)
        }
        let subscriber = Subscriber(storage: storage, id: ObjectIdentifier(storage), index: index, channel: channel)
        let (watch, mustMake) = table.withLock { table -> (LayerWatch, Bool) in
            let watch = table[key] ?? LayerWatch(source, key: key)
            table[key] = watch
            return (watch, watch.add(subscriber))
        }
        guard mustMake else { return }
        let registration = watch.makeRegistration(channel, watcher: storage.watcher)
        let (stale, latecomers) = watch.watching.withLock {
            watching -> (Registration?, [(storage: SuiteStorage, index: Int)]) in
            guard case .making(let latecomers) = watching.channels[channel] else { return (registration, []) }
            guard watching.subscribers.contains(where: { $0.channel == channel }) else {
                watching.channels[channel] = nil
                return (registration, [])
            }
            watching.channels[channel] = .made(registration)
            return (nil, latecomers ? watching.targets(channel).filter { $0.storage !== storage } : [])
        }
        stale?.cancel()
        if !latecomers.isEmpty { watch.source.reload(gate: nil, into: latecomers) }
    }

    /// Adds `subscriber`; whether its channel's registration is to be made by the caller.
    private func add(_ subscriber: Subscriber) -> Bool {
        watching.withLock { watching in
            watching.subscribers.append(subscriber)
            switch watching.channels[subscriber.channel] {
            case nil:
                watching.channels[subscriber.channel] = .making(latecomers: false)
                return true
            case .making:
                watching.channels[subscriber.channel] = .making(latecomers: true)
                return false
            case .made:
                return false
            }
        }
    }

    private func makeRegistration(_ channel: ObjectIdentifier, watcher: any FileWatching) -> Registration {
        if case .cloud(let store, let prefix) = source.kind {
            let observation = store.observe(prefix: prefix.isEmpty ? nil : prefix, scope: .allProcesses) {
                [weak self] _ in
                self?.changed(channel, gate: nil)
            }
            return Registration(observation: observation)
        }
        let tokens = source.watchedPaths.map { path in
            watcher.watch(file: path) { [weak self] event in self?.handle(event, channel) }
        }
        return Registration(watcher: watcher, tokens: tokens)
    }

    /// Stops telling the suite `id` about its layer source `index` (whose watch is `key`); the last
    /// subscriber of a watcher ends its registration, the last of all the watch. Called from the suite's
    /// deinit too, when its weak references are already gone.
    static func unsubscribe(_ key: Key, id: ObjectIdentifier, index: Int) {
        let (watch, stale) = table.withLock { table -> (LayerWatch?, Registration?) in
            guard let watch = table[key] else { return (nil, nil) }
            let (stale, isEmpty) = watch.remove(id: id, index: index)
            if isEmpty { table[key] = nil }
            return (watch, stale)
        }
        stale?.cancel()
        // Released after the lock.
        withExtendedLifetime(watch) {}
    }

    /// Removes the subscriber; the registration to cancel if it was its channel's last, and whether no
    /// subscriber is left.
    private func remove(id: ObjectIdentifier, index: Int) -> (Registration?, isEmpty: Bool) {
        watching.withLock { watching in
            guard let position = watching.subscribers.firstIndex(where: { $0.id == id && $0.index == index }) else {
                return (nil, watching.subscribers.isEmpty)
            }
            let channel = watching.subscribers.remove(at: position).channel
            guard !watching.subscribers.contains(where: { $0.channel == channel }),
                case .made(let registration) = watching.channels[channel]
            else { return (nil, watching.subscribers.isEmpty) }
            // One being made is ended by its maker, which finds no subscriber left.
            watching.channels[channel] = nil
            return (registration, watching.subscribers.isEmpty)
        }
    }

    /// How many suites watch the source, for tests.
    var subscriberCount: Int { watching.withLock { $0.subscribers.count } }

    /// What the watcher says about the source's files. A layer directory that does not exist is normal (no
    /// administrator file, no system file), so a lost watch is not an error; the file is read when it is back.
    private func handle(_ event: WatchEvent, _ channel: ObjectIdentifier) {
        switch event {
        case .fileMayHaveChanged(let gate): changed(channel, gate: gate)
        case .watchRestored, .watcherFailed: changed(channel, gate: nil)
        case .watchLost: return
        }
    }

    private func changed(_ channel: ObjectIdentifier, gate: WatchEvent.ReadGate?) {
        source.reload(gate: gate, into: watching.withLock { $0.targets(channel) })
    }
}
