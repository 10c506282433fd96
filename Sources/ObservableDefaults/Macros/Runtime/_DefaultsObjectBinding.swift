import Dispatch
import Foundation
import Observation

/// Connects one object to its suite: configuration (suite, prefix, modes), writes, and the suite
/// observation that routes a changed key to the one property mapped to it.
///
/// Every `@ObservableDefaults` object owns one. Implementation detail of the macros; not API.
public final class _DefaultsObjectBinding: Sendable {
    struct State: Sendable {
        var suiteName: String?
        var suite: DefaultsSuite?
        var prefix: String
        var ignoreExternalChanges: Bool
        var limitToInstance: Bool
        /// Full key → properties mapped to it.
        var updaters: [String: [_DefaultsPropertyBinding]] = [:]
        /// Full keys with an `update(_:_:)` under way (how many), whose changes wait for it to finish.
        var updating: [String: Int] = [:]
        /// Full keys that changed while an `update(_:_:)` of them was under way.
        var changedWhileUpdating: Set<String> = []
        /// Full keys a finished `update(_:_:)` is applying to its property, and those that changed meanwhile.
        var applying: Set<String> = []
        var applyAgain: Set<String> = []
        var observation: DefaultsObservation?
        /// The suite observer of `observation`, which the object's own writes skip (see ``set(_:slot:keyPath:on:registrar:willSet:didSet:)``).
        var observerToken: UInt64?
        /// Full keys that more than one property is mapped to: a write of one must reach the others.
        var sharedKeys: Set<String> = []
        /// The object is main-actor isolated (seen from `observerStarter`'s isolation).
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
    ///   - suiteName: The macro's `suiteName`, or `nil` for ``DefaultsSuite/standard``.
    ///   - prefix: Prepended to every property's key.
    ///   - ignoreExternalChanges: Changes made elsewhere update the values without notifying.
    ///   - limitToInstance: Observe changes made in this process only.
    ///   - mainActor: The class is main-actor isolated: outside changes are applied on the main actor.
    public init(suiteName: String?, prefix: String, ignoreExternalChanges: Bool, limitToInstance: Bool, mainActor: Bool)
    {
        state = Locked(
            State(
                suiteName: suiteName, prefix: prefix, ignoreExternalChanges: ignoreExternalChanges,
                limitToInstance: limitToInstance))
        self.mainActor = mainActor
    }

    /// Applies the generated initializer's arguments, or a custom initializer's assignments to `_userDefaults`,
    /// `_prefix` and `_isExternalNotificationDisabled` (they win over the macro's; they take effect when
    /// `observerStarter()` runs).
    public func configure(suite: DefaultsSuite?, ignoreExternalChanges: Bool?, prefix: String?) {
        state.withLock { state in
            if let suite { state.suite = suite }
            if let ignoreExternalChanges { state.ignoreExternalChanges = ignoreExternalChanges }
            if let prefix { state.prefix = prefix }
            writeConfiguration.withdraw()
        }
    }

    /// The suite in use (the generated `_userDefaults`).
    public var suite: DefaultsSuite { target.suite }
    /// The key prefix in use (the generated `_prefix`).
    public var prefix: String { state.withLock { $0.prefix } }
    /// Whether changes made elsewhere update the values without notifying (the generated
    /// `_isExternalNotificationDisabled`).
    public var ignoresExternalChanges: Bool { state.withLock { $0.ignoreExternalChanges } }

    /// The suite and prefix in use (the suite is opened on first use).
    var target: (suite: DefaultsSuite, prefix: String) {
        let configuration = currentWriteConfiguration
        return (configuration.suite, configuration.prefix)
    }

    /// The configuration a property write reads: the published one, read without a lock, else a new one
    /// built from `state` and published (the suite is opened on first use).
    var currentWriteConfiguration: WriteConfiguration {
        if let published = writeConfiguration.published { return published }
        return state.withLock { state in
            if let published = writeConfiguration.published { return published }
            let suite = state.suite ?? Self.open(state.suiteName)
            state.suite = suite
            return writeConfiguration.publish(
                WriteConfiguration(
                    suite: suite, prefix: state.prefix, observer: state.observerToken, sharedKeys: state.sharedKeys))
        }
    }

    private static func open(_ name: String?) -> DefaultsSuite {
        guard let name else { return .standard }
        do {
            return try DefaultsSuite(name: name)
        } catch {
            FileHandle.standardError.write(
                Data("ObservableDefaults: cannot open suite '\(name)' (\(error)); using the standard suite\n".utf8))
            return .standard
        }
    }

    // MARK: - Start

    /// Starts observing the suite for the object's keys and loads every property from it (`_ObjectStart`:
    /// a change made meanwhile is neither missed nor overwritten by an older value).
    ///
    /// With `ignoreExternalChanges`, and for the properties whose key paths are in `ignoring`, changes made
    /// elsewhere still update the copy (a read always returns the current value) but are not reported to
    /// Observation or to `willSet`/`didSet`. `isolation` is the caller's (`#isolation` in the generated
    /// code): when it is the main actor — an explicit `@MainActor` class or a module whose default isolation
    /// is the main actor — changes are applied on the main actor even without `defaultIsolationIsMainActor: true`.
    public func start(_ list: _DefaultsPropertyList, ignoring: [AnyKeyPath], isolation: (any Actor)? = nil) {
        let onMainActor = isolation.map { ObjectIdentifier($0) == ObjectIdentifier(MainActor.shared) } ?? false
        let (suite, prefix) = target
        let (ignoreExternal, limit) = state.withLock { ($0.ignoreExternalChanges, $0.limitToInstance) }
        let properties = list.properties.map { property in
            var property = property
            property.silent = ignoreExternal || ignoring.contains(property.keyPath)
            return property
        }
        _ObjectStart.start(
            properties, prefix: prefix, source: suite,
            install: { updaters in
                state.withLock { state in
                    state.updaters = updaters
                    state.sharedKeys = Set(updaters.lazy.filter { $0.value.count > 1 }.map(\.key))
                    state.appliesOnMainActor = onMainActor
                    state.observation?.cancel()
                    state.observation = nil
                    state.observerToken = nil
                    writeConfiguration.withdraw()
                }
            },
            observe: { keys in
                // Added to the storage directly (not with `observe`) to learn the token the object's writes skip.
                let storage = suite.storage
                let token = storage.addObserver(
                    .init(
                        filter: DefaultsKeyFilter(keys: keys, prefix: nil), scope: limit ? .thisProcess : .allProcesses,
                        handler: { [weak self] change in self?.handle(change) }))
                let observation = DefaultsObservation { storage.removeObserver(token) }
                state.withLock { state in
                    state.observation = observation
                    state.observerToken = token
                    writeConfiguration.withdraw()
                }
            })
    }

    /// Routes a change to the properties mapped to the changed keys (cost proportional to the keys). Silent
    /// properties take the new value at once, on the thread that delivers the change. A key with an
    /// `update(_:_:)` under way, or being applied after one, is left to that update, which applies it.
    func handle(_ change: DefaultsChange) {
        let (suite, updaters, onMainActor, keys) = state.withLock { state in
            var keys = change.keys
            for key in change.keys where state.updating[key] != nil || state.applying.contains(key) {
                keys.remove(key)
                if state.updating[key] != nil {
                    state.changedWhileUpdating.insert(key)
                } else {
                    state.applyAgain.insert(key)
                }
            }
            return (state.suite, state.updaters, state.appliesOnMainActor, keys)
        }
        guard let suite else { return }
        var notified: [(String, _DefaultsPropertyBinding)] = []
        for key in keys {
            for property in updaters[key] ?? [] {
                if property.silent { property.follow(suite, key) } else { notified.append((key, property)) }
            }
        }
        guard !notified.isEmpty else { return }
        let work = _DefaultsUnchecked(wrapped: {
            for (key, property) in notified { property.apply(suite, key) }
        })
        if !onMainActor || MainQueue.isCurrent {
            work.wrapped()
        } else {
            DispatchQueue.main.async { work.wrapped() }
        }
    }

    deinit {
        state.withLock { $0.observation?.cancel() }
    }
}
