import Dispatch
import Foundation
import Observation

/// Connects one `@ObservableCloud` object to its ``CloudKeyValueStore``: configuration (prefix, store,
/// modes), writes, and the store observation that routes a changed key to the one property mapped to it.
///
/// The cloud counterpart of `_DefaultsObjectBinding`, over the same slots and storage rules. Every
/// `@ObservableCloud` object owns one. Implementation detail of the macros; not API.
public final class _CloudObjectBinding: Sendable {
    struct State: Sendable {
        var prefix: String
        var syncImmediately: Bool
        var developmentMode: Bool
        /// The store set with `store:` / `_cloudStore`.
        var explicitStore: CloudKeyValueStore?
        /// The store in use, fixed when the object starts or first writes.
        var fixedStore: CloudKeyValueStore?
        /// The object's own in-memory store, made the first time development mode asks for it.
        var developmentStore: CloudKeyValueStore?
        /// Full key → properties mapped to it.
        var updaters: [String: [_CloudPropertyBinding]] = [:]
        /// The store observer of the running observation, which the object's own writes skip.
        var observerToken: Int?
        /// Full keys that more than one property is mapped to: a write of one must reach the others.
        var sharedKeys: Set<String> = []
        /// The object is main-actor isolated (seen from `_od_startCloudObservation`'s isolation).
        var appliesOnMainActor = false
    }

    let state: Locked<State>
    /// What a property write reads, without taking `state`'s lock (see ``WriteConfiguration``); withdrawn on
    /// every change, published again by the next write.
    let writeConfiguration = _PublishedConfiguration<WriteConfiguration>()
    /// Outside changes are applied on the main actor.
    let mainActor: Bool

    /// Creates the binding with the macro's arguments.
    /// - Parameters:
    ///   - prefix: Prepended to every property's key.
    ///   - syncImmediately: Each property write asks the store to upload at once (see ``configure(prefix:syncImmediately:developmentMode:store:)``).
    ///   - developmentMode: Keep the values in a store of the object's own, in memory, unless a store is given.
    ///   - mainActor: The class is main-actor isolated: outside changes are applied on the main actor.
    public init(prefix: String, syncImmediately: Bool, developmentMode: Bool, mainActor: Bool) {
        state = Locked(State(prefix: prefix, syncImmediately: syncImmediately, developmentMode: developmentMode))
        self.mainActor = mainActor
    }

    /// Applies the generated initializer's arguments, or a custom initializer's assignments to `_prefix`,
    /// `_syncImmediately`, `_developmentMode` and `_cloudStore`; `nil` leaves a setting as it is.
    ///
    /// The prefix takes effect when the object starts (`CloudObservation`); the store is fixed once the
    /// object starts or first writes, and a later `store:` is ignored (the object's values came from the
    /// first one).
    public func configure(
        prefix: String? = nil, syncImmediately: Bool? = nil, developmentMode: Bool? = nil,
        store: CloudKeyValueStore? = nil
    ) {
        state.withLock { state in
            if let prefix { state.prefix = prefix }
            if let syncImmediately { state.syncImmediately = syncImmediately }
            if let developmentMode { state.developmentMode = developmentMode }
            if let store, state.fixedStore == nil { state.explicitStore = store }
            writeConfiguration.withdraw()
        }
    }

    /// The key prefix in use (the generated `_prefix`).
    public var prefix: String { state.withLock { $0.prefix } }
    /// Whether each property write asks the store to upload at once (the generated `_syncImmediately`).
    public var syncImmediately: Bool { state.withLock { $0.syncImmediately } }
    /// The development-mode flag as given (the generated `_developmentMode`).
    public var developmentModeRequested: Bool { state.withLock { $0.developmentMode } }

    /// Whether the object runs in development mode (the generated `_developmentMode_`): the flag, or
    /// `OBSERVABLE_DEFAULTS_DEV_MODE=true`, or `XCODE_RUNNING_FOR_PREVIEWS=1` in the environment.
    public var isDevelopmentMode: Bool {
        Self.isDevelopmentMode(requested: developmentModeRequested, environment: ProcessInfo.processInfo.environment)
    }

    /// The store in use (the generated `_cloudStore`): the one given with `store:` / `_cloudStore`, else
    /// in development mode a store of this object's own, in memory (as the Apple library keeps each
    /// object's values in the object), else ``CloudKeyValueStore/default``.
    public var store: CloudKeyValueStore {
        state.withLock { state in
            state.fixedStore ?? Self.chosenStore(&state, environment: ProcessInfo.processInfo.environment)
        }
    }

    // MARK: - Choosing the store

    /// Which store an object uses.
    enum StoreChoice: Equatable {
        case explicit(CloudKeyValueStore)
        /// The object's own in-memory store.
        case development
        case `default`

        static func == (lhs: Self, rhs: Self) -> Bool {
            switch (lhs, rhs) {
            case (.explicit(let left), .explicit(let right)): left === right
            case (.development, .development), (.default, .default): true
            default: false
            }
        }
    }

    /// The flag, or the environment's request (`OBSERVABLE_DEFAULTS_DEV_MODE=true`, `XCODE_RUNNING_FOR_PREVIEWS=1`).
    static func isDevelopmentMode(requested: Bool, environment: [String: String]) -> Bool {
        requested || CloudKeyValueStore.requestsDevelopmentMode(environment)
    }

    /// The decision behind ``store``, with the environment passed in (tests inject one).
    static func storeChoice(explicit: CloudKeyValueStore?, developmentMode: Bool, environment: [String: String])
        -> StoreChoice
    {
        if let explicit { return .explicit(explicit) }
        if isDevelopmentMode(requested: developmentMode, environment: environment) { return .development }
        #if DEBUG
            // The Apple library's test suite, run against this package in its test mode.
            if let store = CloudKeyValueStore.upstreamTestStore { return .explicit(store) }
        #endif
        return .default
    }

    /// The store ``storeChoice(explicit:developmentMode:environment:)`` picks for `state`, making the
    /// object's own development store the first time it is picked.
    static func chosenStore(_ state: inout State, environment: [String: String]) -> CloudKeyValueStore {
        switch storeChoice(
            explicit: state.explicitStore, developmentMode: state.developmentMode, environment: environment)
        {
        case .explicit(let store): return store
        case .default: return .default
        case .development:
            if let store = state.developmentStore { return store }
            let store = CloudKeyValueStore.inMemory()
            state.developmentStore = store
            return store
        }
    }

    /// The store, fixed from now on, and the prefix.
    var target: (store: CloudKeyValueStore, prefix: String) {
        let configuration = currentWriteConfiguration
        return (configuration.store, configuration.prefix)
    }

    // MARK: - Start

    /// Observes the store for exactly the object's full keys (prefix + key) — changes from elsewhere and
    /// writes of others in this process through the same store — and loads every property from the store's
    /// memory (its value, else the declaration default); see `_ObjectStart`: a change made meanwhile is
    /// neither missed nor overwritten by an older value.
    ///
    /// `isolation` is the caller's (`#isolation` in the generated code): when it is the main actor, changes
    /// are applied on the main actor. Returns the observation (`CloudObservation` keeps it; releasing it
    /// stops the updates), or `nil` when the class has no persisted property.
    public func start(_ list: _CloudPropertyList, isolation: (any Actor)? = nil) -> DefaultsObservation? {
        let onMainActor = isolation.map { ObjectIdentifier($0) == ObjectIdentifier(MainActor.shared) } ?? false
        let (store, prefix) = target
        return _ObjectStart.start(
            list.properties, prefix: prefix, source: store,
            install: { updaters in
                state.withLock { state in
                    state.updaters = updaters
                    state.sharedKeys = Set(updaters.lazy.filter { $0.value.count > 1 }.map(\.key))
                    state.appliesOnMainActor = onMainActor
                    state.observerToken = nil
                    writeConfiguration.withdraw()
                }
            },
            observe: { keys in
                let core = store.core
                let token = core.addObserver(
                    .init(
                        filter: DefaultsKeyFilter(keys: keys, prefix: nil),
                        handler: { [weak self] change in self?.handle(change) },
                        hearsLocalWrites: true))
                state.withLock { state in
                    state.observerToken = token
                    writeConfiguration.withdraw()
                }
                return DefaultsObservation { core.removeObserver(token) }
            })
    }

    /// Routes a change to the properties mapped to the changed keys (cost proportional to the keys).
    func handle(_ change: CloudChange) {
        let (store, updaters, onMainActor) = state.withLock { ($0.fixedStore, $0.updaters, $0.appliesOnMainActor) }
        guard let store else { return }
        var notified: [(String, _CloudPropertyBinding)] = []
        for key in change.keys {
            for property in updaters[key] ?? [] { notified.append((key, property)) }
        }
        guard !notified.isEmpty else { return }
        let work = _DefaultsUnchecked(wrapped: {
            for (key, property) in notified { property.apply(store, key) }
        })
        if !onMainActor || MainQueue.isCurrent {
            work.wrapped()
        } else {
            DispatchQueue.main.async { work.wrapped() }
        }
    }
}
