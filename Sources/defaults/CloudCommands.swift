import Dispatch
import Foundation
import ObservableDefaults
import Synchronization

/// `defaults cloud read|write|delete|watch …`: the etcd-backed cloud store from a shell.
///
/// The cluster is `--cloud etcd://…`, else `$OBSERVABLE_DEFAULTS_CLOUD` (the address
/// `CloudKeyValueStore.default` uses). The tool is a window onto the server, not an app: its store keeps
/// its local copy in a temporary directory removed at exit, so it never shares (or leaves behind) an app's
/// offline copy, and a write the server did not confirm is not uploaded later behind the operator's back.
struct CloudCommands {
    let json: Bool
    /// The `--cloud` values given.
    let addresses: [String]
    let literalFrom: Int

    static let usage = "defaults cloud read [key] | write key [type flag] value | delete key | watch [key...]"
    /// How long a command waits for the server.
    static let timeout: TimeInterval = 5

    func run(_ arguments: [String], prefixes: [String]) throws(ToolError) {
        guard let action = arguments.first else {
            throw .usage("missing cloud verb; usage: \(Self.usage)", verb: "cloud")
        }
        let rest = Array(arguments.dropFirst())
        switch action {
        case "read":
            try rest.expectCount(0...1, verb: "cloud", usage: "defaults cloud read [key]")
            try withStore { store, place throws(ToolError) in try read(rest.first, store: store, place: place) }
        case "write":
            try withStore { store, place throws(ToolError) in try write(rest, store: store, place: place) }
        case "delete":
            try rest.expectCount(1...1, verb: "cloud", usage: "defaults cloud delete key")
            try withStore { store, place throws(ToolError) in try delete(rest[0], store: store, place: place) }
        case "watch":
            guard prefixes.count <= 1 else { throw .usage("--prefix may be given once", verb: "cloud") }
            try watch(keys: rest.isEmpty ? nil : Set(rest), prefix: prefixes.first)
        default:
            throw .usage("unknown cloud verb '\(action)'; usage: \(Self.usage)", verb: "cloud")
        }
    }

    // MARK: The store

    /// The configured cluster, or a clear error when none is.
    func configuration() throws(ToolError) -> EtcdConfiguration {
        guard addresses.count <= 1 else { throw .usage("--cloud may be given once", verb: "cloud") }
        let environment = ProcessInfo.processInfo.environment["OBSERVABLE_DEFAULTS_CLOUD"].flatMap {
            $0.isEmpty ? nil : $0
        }
        guard let address = addresses.first ?? environment else {
            throw ToolError(
                "no cloud is configured: pass --cloud etcd://host:2379/namespace or set OBSERVABLE_DEFAULTS_CLOUD")
        }
        do { return try EtcdConfiguration(url: address) } catch { throw ToolError(error) }
    }

    /// Opens the store in a temporary state directory, runs `body` with it and a description of where it
    /// syncs, releases the store (which stops its sync thread) and removes the directory.
    private func withStore(_ body: (CloudKeyValueStore, String) throws(ToolError) -> Void) throws(ToolError) {
        let state = Self.stateDirectory()
        defer { Self.remove(state) }
        // In a function of its own, so the store is released before the directory is removed.
        func use() throws(ToolError) {
            let (store, place) = try open(state: state)
            try body(store, place)
        }
        try use()
    }

    /// `$TMPDIR/defaults-cloud-PID`: the tool's state directory, private to this process.
    static func stateDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("defaults-cloud-\(getpid())", isDirectory: true)
    }

    private func open(state: URL) throws(ToolError) -> (CloudKeyValueStore, String) {
        var configuration = try configuration()
        configuration.stateDirectory = state
        let place =
            "namespace '\(configuration.namespace)' at \(configuration.endpoints.map(\.absoluteString).joined(separator: ","))"
        do { return (try CloudKeyValueStore(etcd: configuration), place) } catch { throw ToolError(error) }
    }

    /// Removes the temporary state directory. The store was released before, which stopped its local copy's writes,
    /// so its sync thread can no longer write into the directory.
    static func remove(_ state: URL) {
        try? FileManager.default.removeItem(at: state)
    }

    /// Waits for the server; throws naming the cluster and what the store reported when it does not answer.
    private func synchronize(_ store: CloudKeyValueStore, place: String, consequence: String) throws(ToolError) {
        guard !store.synchronize(timeout: Self.timeout) || store.hasPendingChanges else { return }
        let errors = store.currentErrors.map(\.description).filter { !$0.contains("no cloud is configured") }
        let why = errors.isEmpty ? "no answer within \(Int(Self.timeout)) seconds" : errors.joined(separator: "; ")
        throw ToolError("cannot sync with the cloud (\(place)): \(why); \(consequence)")
    }

    // MARK: Verbs

    private func read(_ key: String?, store: CloudKeyValueStore, place: String) throws(ToolError) {
        try synchronize(store, place: place, consequence: "nothing was read")
        guard let key else {
            let contents = DefaultsValue.dictionary(store.values())
            return Console.out(json ? JSONFormat.render(contents) : HumanFormat.render(contents, indent: 0))
        }
        guard let value = store.value(forKey: key) else {
            throw ToolError("Key '\(key)' does not exist in the cloud (\(place))")
        }
        Console.out(json ? JSONFormat.render(value) : HumanFormat.topLevel(value))
    }

    private func write(_ arguments: [String], store: CloudKeyValueStore, place: String) throws(ToolError) {
        guard arguments.count >= 2 else {
            throw .usage("missing arguments; usage: defaults cloud write key [type flag] value", verb: "cloud")
        }
        let key = arguments[0]
        // `cloud` and `write` come before the key in the positional arguments.
        if WriteAction.looksLikeFlag(key) && literalFrom > 2 {
            throw .usage(
                "'\(key)' is where the key goes, and it looks like an option (for a key that begins with '-', write: defaults cloud write -- \(key) ...)",
                verb: "cloud")
        }
        let action: WriteAction
        do throws(ToolError) {
            action = try WriteAction(arguments: Array(arguments.dropFirst()))
        } catch  where error.exitCode == 1 {
            throw ToolError("\(error.message) (cloud key '\(key)'); nothing was written")
        }
        try synchronize(store, place: place, consequence: "nothing was written")
        let newValue: DefaultsValue
        switch (action, store.value(forKey: key)) {
        case (.set(let value), _): newValue = value
        case (.arrayAdd(let items), nil): newValue = .array(items)
        case (.arrayAdd(let items), .array(let existing)?): newValue = .array(existing + items)
        case (.dictAdd(let entries), nil): newValue = .dictionary(entries)
        case (.dictAdd(let entries), .dictionary(let existing)?):
            newValue = .dictionary(existing.merging(entries) { _, new in new })
        case (.arrayAdd, let other?), (.dictAdd, let other?):
            throw ToolError("cannot add to cloud key '\(key)': it holds a \(other.typeName)")
        }
        try change(key, to: newValue, store: store, place: place)
    }

    private func delete(_ key: String, store: CloudKeyValueStore, place: String) throws(ToolError) {
        try synchronize(store, place: place, consequence: "nothing was deleted")
        guard store.value(forKey: key) != nil else {
            throw ToolError("Key '\(key)' does not exist in the cloud (\(place))")
        }
        try change(key, to: nil, store: store, place: place)
    }

    /// Sets (or removes) the key and waits until the server has it; a refusal (the store's limits, a value
    /// JSON cannot hold) or no confirmation is an error.
    private func change(_ key: String, to value: DefaultsValue?, store: CloudKeyValueStore, place: String)
        throws(ToolError)
    {
        let refusals = Mutex<[DefaultsError]>([])
        let observation = store.observeErrors { error in
            if error.key == key { refusals.withLock { $0.append(error) } }
        }
        defer { observation.cancel() }
        store.set(value, forKey: key)
        // A refusal is reported before `synchronize` returns (it waits for the error channel's deliveries).
        let synchronized = store.synchronize(timeout: Self.timeout) && !store.hasPendingChanges
        let refused = refusals.withLock { $0 }
        if !refused.isEmpty {
            throw ToolError(
                "the cloud store refused key '\(key)', nothing was written: \(refused.map(\.description).joined(separator: "; "))"
            )
        }
        if !synchronized { try synchronize(store, place: place, consequence: "the server may not have the change") }
    }

    private func watch(keys: Set<String>?, prefix: String?) throws(ToolError) -> Never {
        let state = Self.stateDirectory()
        let (held, observations) = try startWatching(keys: keys, prefix: prefix, state: state)
        let signalSources = SignalExit.install {
            for observation in observations { observation.cancel() }
            // Released before the directory goes: its local copy is no longer written, even at exit.
            held.release()
            Self.remove(state)
        }
        withExtendedLifetime(signalSources) { dispatchMain() }
    }

    /// Opens the watch's store, observes it and syncs once; returns the held store (this function's own
    /// reference ends when it returns) and the observations to cancel.
    private func startWatching(keys: Set<String>?, prefix: String?, state: URL) throws(ToolError) -> (
        HeldStore, [DefaultsObservation]
    ) {
        let (store, place) = try open(state: state)
        let held = HeldStore(store)
        let json = self.json
        let errors = store.observeErrors { error in
            guard !error.description.contains("no cloud is configured") else { return }
            Console.err("defaults: \(error.description)")
        }
        let observation = store.observe(keys: keys, prefix: prefix) { change in
            held.use { store in
                for key in change.keys.sorted() {
                    Console.out(
                        WatchLine.text(
                            key: key, value: store.value(forKey: key), sourceField: "reason",
                            source: change.reason.description, json: json))
                }
            }
        }
        // Once the first round is done, every later change reaches the watch (it resumes from the revision read).
        if !store.synchronize(timeout: Self.timeout) {
            Console.err(
                "defaults: the cloud (\(place)) did not answer yet; watching anyway, changes appear once it does")
        }
        Console.err("Watching the cloud \(place) (press Ctrl-C to stop)")
        return (held, [observation, errors])
    }
}
