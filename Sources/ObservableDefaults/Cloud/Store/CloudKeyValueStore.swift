import Foundation

/// A key-value store shared across machines, shaped like `NSUbiquitousKeyValueStore` (which is a
/// typealias of it on Linux).
///
/// Reads come from memory, never the network. What a store syncs with depends on how it was made:
///
/// - ``development`` and ``inMemory(limits:)``: memory only (shared in the process, or a store of its own);
///   ``simulateExternalChange(_:reason:)`` plays the other machines.
/// - ``init(etcd:)``: an etcd cluster. A write changes memory and an offline-first local copy on disk at
///   once and is uploaded in the background as a compare-and-swap on the revision it was based on; when
///   another machine changed the key first, the server wins and observers hear a server change. Changes
///   from elsewhere arrive through a watch that resumes from the last seen revision.
/// - ``localOnly(directory:limits:)``: a local file that never syncs, like iCloud without an account.
///
/// The local copy is kept only in a directory no other user can change; elsewhere the store keeps its values in
/// memory and says why (see ``localCopyURL``).
///
/// ``default`` picks one from the environment (see ``default``). Observers hear only changes that did not
/// come from this store's own writes, with iCloud's reasons (``CloudChangeReason``); each change is also
/// posted as ``didChangeExternallyNotification`` with Apple's `userInfo` keys.
public final class CloudKeyValueStore: Sendable {
    /// What a store syncs with.
    public enum Mode: String, Sendable, Equatable {
        /// Memory only (``development``, shared in the process, or ``inMemory(limits:)``).
        case development
        /// A local file; never syncs.
        case localOnly
        /// An etcd cluster, with a local copy on disk.
        case etcd
    }

    /// What this store syncs with.
    public let mode: Mode
    /// The etcd configuration of an ``Mode/etcd`` store.
    public let configuration: EtcdConfiguration?
    let core: CloudStoreCore
    let sync: EtcdSync?

    /// Posted (with the store as `object`) when values changed from elsewhere; `userInfo` holds
    /// `NSUbiquitousKeyValueStoreChangeReasonKey` (an `Int`) and `NSUbiquitousKeyValueStoreChangedKeysKey`
    /// (`[String]`). Never posted for this store's own writes.
    public static let didChangeExternallyNotification = Notification.Name(
        "NSUbiquitousKeyValueStoreDidChangeExternallyNotification")

    /// The store shared in the process, chosen from the environment once:
    /// `OBSERVABLE_DEFAULTS_DEV_MODE=true` or `XCODE_RUNNING_FOR_PREVIEWS=1` → ``development``;
    /// `OBSERVABLE_DEFAULTS_CLOUD=etcd://host:2379,host2:2379/namespace` → an etcd store;
    /// otherwise a local-only store that says on its error channel that it does not sync.
    public static let `default`: CloudKeyValueStore = fromEnvironment(ProcessInfo.processInfo.environment)

    /// A development-mode store in memory only, shared by everything in this process that names it. An
    /// `@ObservableCloud` object in development mode does not use it: it gets a store of its own
    /// (``inMemory(limits:)``); pass `store: .development` to share this one.
    public static let development = inMemory()

    /// A new development-mode store of its own: memory only, empty, reached only through the returned
    /// object. What an `@ObservableCloud` object in development mode uses, so that a fresh object starts from
    /// its declaration defaults (SwiftUI previews, unit tests); ``simulateExternalChange(_:reason:)`` plays
    /// the other machines.
    public static func inMemory(limits: CloudLimits = .iCloud) -> CloudKeyValueStore {
        CloudKeyValueStore(mode: .development, configuration: nil, state: CloudState(), localCopy: nil, limits: limits)
    }

    /// Whether the environment asks for development mode (as the Apple library's `_developmentMode_`).
    public static var isDevelopmentModeRequested: Bool { requestsDevelopmentMode(ProcessInfo.processInfo.environment) }

    static func requestsDevelopmentMode(_ environment: [String: String]) -> Bool {
        environment["OBSERVABLE_DEFAULTS_DEV_MODE"] == "true" || environment["XCODE_RUNNING_FOR_PREVIEWS"] == "1"
    }

    /// A store synced with an etcd cluster. It starts with the values of its local copy (so a process
    /// starts while the cluster is unreachable) and syncs on a background thread until released.
    /// Throws when the configuration has no endpoint or an empty namespace.
    public convenience init(etcd configuration: EtcdConfiguration) throws(DefaultsError) {
        guard !configuration.endpoints.isEmpty else {
            throw DefaultsError(.cloud, message: "an etcd store needs at least one endpoint")
        }
        guard !configuration.namespace.isEmpty else {
            throw DefaultsError(.cloud, message: "an etcd store needs a namespace")
        }
        let directory = CloudStateDirectory.resolve(configuration.stateDirectory)
        let file = directory.appendingPathComponent(
            CloudStateDirectory.localCopyName(endpoints: configuration.endpoints, namespace: configuration.namespace))
        self.init(mode: .etcd, configuration: configuration, localCopyAt: file, limits: configuration.limits)
    }

    /// A store that keeps its values in `directory/cloud/local.json` (`nil`: the default state directory,
    /// see ``EtcdConfiguration/stateDirectory``) and never syncs, like iCloud without an account. Its error
    /// channel says so.
    public static func localOnly(directory: URL? = nil, limits: CloudLimits = .iCloud) -> CloudKeyValueStore {
        let file = localOnlyCopyURL(in: directory)
        let store = CloudKeyValueStore(mode: .localOnly, configuration: nil, localCopyAt: file, limits: limits)
        let kept = store.localCopyURL == nil ? "in memory only" : "in \(file.path)"
        store.core.report(
            DefaultsError(
                .cloud,
                message:
                    "no cloud is configured (set OBSERVABLE_DEFAULTS_CLOUD=etcd://host:2379/namespace): values are kept \(kept) and never synced"
            ), topic: .notSyncing)
        return store
    }

    /// Where ``localOnly(directory:limits:)`` keeps its values for `directory`.
    static func localOnlyCopyURL(in directory: URL?) -> URL {
        CloudStateDirectory.resolve(directory).appendingPathComponent("local.json")
    }

    static func fromEnvironment(_ environment: [String: String]) -> CloudKeyValueStore {
        if requestsDevelopmentMode(environment) { return development }
        let stateDirectory = CloudStateDirectory.base(environment)
        guard let address = environment["OBSERVABLE_DEFAULTS_CLOUD"], !address.isEmpty else {
            return localOnly(directory: stateDirectory)
        }
        do {
            var configuration = try EtcdConfiguration(url: address, environment: environment)
            configuration.stateDirectory = stateDirectory
            return try CloudKeyValueStore(etcd: configuration)
        } catch {
            let store = localOnly(directory: stateDirectory)
            store.core.report(
                DefaultsError(.cloud, message: "OBSERVABLE_DEFAULTS_CLOUD: \(error.message)"),
                topic: .cloudConfiguration)
            return store
        }
    }

    private convenience init(mode: Mode, configuration: EtcdConfiguration?, localCopyAt file: URL, limits: CloudLimits)
    {
        do {
            try CloudStateDirectory.prepare(file.deletingLastPathComponent(), localCopy: file)
        } catch {
            // Another user could change the copy there: memory only, and the error says why (CloudStateDirectory).
            self.init(mode: mode, configuration: configuration, state: CloudState(), localCopy: nil, limits: limits)
            core.report(error, topic: .untrustedStateDirectory)
            return
        }
        let share = CloudLocalCopyShare(fileURL: file)
        var problems: [DefaultsError] = []
        var state = CloudState()
        do { state = try share.load { problems.append($0) } ?? CloudState() } catch { problems.append(error) }
        let unread = share.own.awaitsLoad
        state.localCopyUnread = unread
        self.init(mode: mode, configuration: configuration, state: state, localCopy: share, limits: limits)
        // Copies of ended processes were taken in: a whole save holds their writes, then they are removed.
        if share.hasAdoptedCopies { core.saveLocalCopy(.wholeStateNow) }
        if unread, let problem = problems.last {
            // Nothing was loaded or moved: the copy is read again until it can be (no descriptor was left).
            core.loadLocalCopyLater(problem)
            return
        }
        // Topics of their own: a later successful save does not undo what was found (and moved aside) at start.
        for (index, problem) in problems.enumerated() {
            core.report(problem, topic: .localCopyFinding(.atStart, index: index))
        }
    }

    init(
        mode: Mode, configuration: EtcdConfiguration?, state: CloudState, localCopy: CloudLocalCopyShare?,
        limits: CloudLimits,
        writeMirror: (@Sendable (String, DefaultsValue?) -> Void)? = nil
    ) {
        self.mode = mode
        self.configuration = configuration
        let core = CloudStoreCore(
            state: state, localCopy: localCopy, limits: limits, confirmsWrites: configuration != nil,
            writeMirror: writeMirror)
        self.core = core
        let sync = configuration.map { EtcdSync(client: EtcdClient(configuration: $0), core: core) }
        self.sync = sync
        core.uploadWanted.set { [weak sync] _ in sync?.control.wake() }
        postNotifications()
        sync?.start()
    }

    deinit {
        sync?.stop()
        // Every write made through this store reaches the disk before the store is gone; what the sync
        // thread still finds after this point belongs to the next process to load the copy from the server.
        core.flushLocalCopy(stopping: true)
    }

    private func postNotifications() {
        let sender: @Sendable (CloudChange) -> Void = { [weak self] change in
            NotificationCenter.default.post(
                name: CloudKeyValueStore.didChangeExternallyNotification, object: self,
                userInfo: [
                    NSUbiquitousKeyValueStoreChangeReasonKey: change.reason.rawValue,
                    NSUbiquitousKeyValueStoreChangedKeysKey: change.keys.sorted()
                ])
        }
        core.notificationSender.set(sender)
    }

    /// The name of the local copy (`nil` for the development store): its saves go to two slot files beside
    /// it, `<name>.slot0` and `<name>.slot1` (see the cloud article); a copy in the earlier single-file
    /// form is this file itself. A process that starts while another runs the same store writes a copy of
    /// its own beside it, `<name>.p<pid>-<random>`, taken in by the next process to start once it has ended.
    /// Also `nil` when the state directory could be changed by another user (writable by others, owned by
    /// another user, a symlink): the store then keeps no local copy, its values live in memory only, and
    /// ``currentErrors`` says why.
    public var localCopyURL: URL? { core.share?.fileURL }

    /// The limits local writes must keep.
    public var limits: CloudLimits { core.limits }

    /// Reconciles with the server: uploads pending writes and waits (at most `timeout` seconds) until the
    /// server has them. Returns whether it succeeded: `false` at once when every endpoint refuses the
    /// connection, `true` at once for development and local-only stores. Either way the local copy holds
    /// every write made before the call when it returns, unless it could not be read at start and still
    /// cannot be (no file descriptor left; see ``currentErrors``): then nothing is written over it yet.
    @discardableResult
    public func synchronize(timeout: TimeInterval) -> Bool {
        let succeeded = sync?.synchronize(timeout: timeout) ?? true
        core.flushLocalCopy()
        core.waitForDeliveries()  // changes found so far have reached the observers
        return succeeded
    }

    /// ``synchronize(timeout:)`` with a five-second timeout, as `NSUbiquitousKeyValueStore.synchronize()`.
    @discardableResult
    public func synchronize() -> Bool { synchronize(timeout: 5) }

    /// Whether writes wait for upload (an etcd store that could not reach the server yet, or refused ones).
    public var hasPendingChanges: Bool { core.state.withLock { !$0.pending.isEmpty } }

    /// Development mode only: applies `changes` (`nil` removes a key) as if another machine had made them
    /// and tells observers with `reason` (for ``CloudChangeReason/quotaViolation`` the keys are only
    /// announced, nothing changes). Throws on any other store.
    public func simulateExternalChange(_ changes: [String: DefaultsValue?], reason: CloudChangeReason = .serverChange)
        throws(DefaultsError)
    {
        guard mode == .development else {
            throw DefaultsError(
                .cloud,
                message: "only the development store accepts simulated changes (this store's mode is \(mode.rawValue))")
        }
        core.change { state in
            guard reason != .quotaViolation else { return (Set(changes.keys), reason) }
            var changed = Set<String>()
            for (key, value) in changes {
                let value = value.map(JSONRepresentation.normalize)
                if state.values[key] != value || reason != .serverChange {
                    state.setValue(value, forKey: key)
                    changed.insert(key)
                }
            }
            return (changed, reason)
        }
    }
}
