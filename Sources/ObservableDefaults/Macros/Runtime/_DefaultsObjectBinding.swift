import Dispatch
import Foundation
import Observation
import Synchronization

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

    let state: Mutex<State>
    /// Outside changes are applied on the main actor.
    let mainActor: Bool

    /// Creates the binding with the macro's arguments.
    /// - Parameters:
    ///   - suiteName: The macro's `suiteName`, or `nil` for ``DefaultsSuite/standard``.
    ///   - prefix: Prepended to every property's key.
    ///   - ignoreExternalChanges: Changes made elsewhere update the values without notifying.
    ///   - limitToInstance: Observe changes made in this process only.
    ///   - mainActor: The class is main-actor isolated: outside changes are applied on the main actor.
    public init(suiteName: String?, prefix: String, ignoreExternalChanges: Bool, limitToInstance: Bool, mainActor: Bool) {
        state = Mutex(State(suiteName: suiteName, prefix: prefix, ignoreExternalChanges: ignoreExternalChanges, limitToInstance: limitToInstance))
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
        let target = writeTarget
        return (target.suite, target.prefix)
    }

    /// ``target``, with what a property write needs besides: the object's own suite observer and the keys
    /// it must not skip.
    var writeTarget: (suite: DefaultsSuite, prefix: String, observer: UInt64?, sharedKeys: Set<String>) {
        state.withLock { state in
            if let suite = state.suite { return (suite, state.prefix, state.observerToken, state.sharedKeys) }
            let suite = Self.open(state.suiteName)
            state.suite = suite
            return (suite, state.prefix, state.observerToken, state.sharedKeys)
        }
    }

    private static func open(_ name: String?) -> DefaultsSuite {
        guard let name else { return .standard }
        do {
            return try DefaultsSuite(name: name)
        } catch {
            FileHandle.standardError.write(Data("ObservableDefaults: cannot open suite '\(name)' (\(error)); using the standard suite\n".utf8))
            return .standard
        }
    }

    // MARK: - Start

    /// Loads every property from the suite and starts observing it.
    ///
    /// With `ignoreExternalChanges`, and for the properties whose key paths are in `ignoring`, changes made
    /// elsewhere still update the copy (a read always returns the current value) but are not reported to
    /// Observation or to `willSet`/`didSet`. `isolation` is the caller's (`#isolation` in the generated
    /// code): when it is the main actor — an explicit `@MainActor` class or a module whose default isolation
    /// is the main actor — changes are applied on the main actor even without `defaultIsolationIsMainActor: true`.
    public func start(_ list: _DefaultsPropertyList, ignoring: [AnyKeyPath], isolation: (any Actor)? = nil) {
        let onMainActor = isolation.map { ObjectIdentifier($0) == ObjectIdentifier(MainActor.shared) } ?? false
        let (suite, prefix) = target
        let ignoreExternal = state.withLock { $0.ignoreExternalChanges }
        var updaters: [String: [_DefaultsPropertyBinding]] = [:]
        for var property in list.properties {
            let fullKey = prefix + property.key
            property.load(suite, fullKey)
            property.silent = ignoreExternal || ignoring.contains(property.keyPath)
            updaters[fullKey, default: []].append(property)
        }
        let limit = state.withLock { state in
            state.updaters = updaters
            state.sharedKeys = Set(updaters.lazy.filter { $0.value.count > 1 }.map(\.key))
            state.appliesOnMainActor = onMainActor
            state.observation?.cancel()
            state.observation = nil
            state.observerToken = nil
            return state.limitToInstance
        }
        guard !updaters.isEmpty else { return }
        // Added to the storage directly (not with `observe`) to learn the token the object's writes skip.
        let storage = suite.storage
        let token = storage.addObserver(.init(
            filter: DefaultsKeyFilter(keys: Set(updaters.keys), prefix: nil), scope: limit ? .thisProcess : .allProcesses,
            handler: { [weak self] change in self?.handle(change) }))
        let observation = DefaultsObservation { storage.removeObserver(token) }
        state.withLock { state in
            state.observation = observation
            state.observerToken = token
        }
    }

    /// Routes a change to the properties mapped to the changed keys (cost proportional to the keys). Silent
    /// properties take the new value at once, on the thread that delivers the change. A key with an
    /// `update(_:_:)` under way, or being applied after one, is left to that update, which applies it.
    func handle(_ change: DefaultsChange) {
        let (suite, updaters, onMainActor, keys) = state.withLock { state in
            var keys = change.keys
            for key in change.keys where state.updating[key] != nil || state.applying.contains(key) {
                keys.remove(key)
                if state.updating[key] != nil { state.changedWhileUpdating.insert(key) } else { state.applyAgain.insert(key) }
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
