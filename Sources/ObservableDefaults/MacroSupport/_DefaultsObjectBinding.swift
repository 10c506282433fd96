import Dispatch
import Foundation
import Observation
import Synchronization

/// One persisted property of an object, type-erased for the object's binding.
///
/// Implementation detail of the macros; not API.
public struct _DefaultsPropertyBinding: @unchecked Sendable {
    let key: String
    let keyPath: AnyKeyPath
    /// Reads the suite into the property's copy without notifying anyone (start-up).
    let load: (DefaultsSuite, String) -> Void
    /// Reads the suite after a change of the key and applies it: observers, Observation, copy.
    let apply: (DefaultsSuite, String) -> Void
}

/// The properties `observerStarter` collects.
///
/// Implementation detail of the macros; not API.
public final class _DefaultsPropertyList: @unchecked Sendable {
    var properties: [_DefaultsPropertyBinding] = []
    public init() {}
    public func append(_ property: _DefaultsPropertyBinding) { properties.append(property) }
}

/// Whether code runs on the main queue (the main actor's executor). `Thread.isMainThread` is not the test:
/// under some hosts (swift-testing on Linux) the main queue is drained by a thread Foundation does not call
/// the main thread.
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// A weak reference that can cross threads.
final class _DefaultsWeak<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

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
        var observation: DefaultsObservation?
    }

    private let state: Mutex<State>
    /// Outside changes are applied on the main actor.
    let mainActor: Bool

    public init(suiteName: String?, prefix: String, ignoreExternalChanges: Bool, limitToInstance: Bool, mainActor: Bool) {
        state = Mutex(State(suiteName: suiteName, prefix: prefix, ignoreExternalChanges: ignoreExternalChanges, limitToInstance: limitToInstance))
        self.mainActor = mainActor
    }

    /// Applies the generated initializer's arguments (they win over the macro's).
    public func configure(suite: DefaultsSuite?, ignoreExternalChanges: Bool?, prefix: String?) {
        state.withLock { state in
            if let suite { state.suite = suite }
            if let ignoreExternalChanges { state.ignoreExternalChanges = ignoreExternalChanges }
            if let prefix { state.prefix = prefix }
        }
    }

    /// The suite and prefix in use (the suite is opened on first use).
    var target: (suite: DefaultsSuite, prefix: String) {
        state.withLock { state in
            if let suite = state.suite { return (suite, state.prefix) }
            let suite = Self.open(state.suiteName)
            state.suite = suite
            return (suite, state.prefix)
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

    // MARK: - Writes

    /// A property write: skipped when the stored form does not change; otherwise `willSet`, the copy updated
    /// inside Observation's `withMutation` for that property only, the suite written, `didSet`.
    public func set<Host: Observation.Observable & AnyObject, Value>(
        _ newValue: Value, slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Value) -> Void)? = nil, didSet: ((Value) -> Void)? = nil
    ) {
        let (suite, prefix) = target
        let fullKey = prefix + slot.key
        let stored: DefaultsValue?
        do {
            stored = try slot.codec.encode(newValue)
        } catch {
            suite.report(DefaultsError(.unsupportedValue, message: "cannot encode a value of type \(Value.self): \(error)", key: fullKey))
            return
        }
        let old = slot.snapshot
        if old.stored == stored { return }
        willSet?(newValue)
        registrar.withMutation(of: host, keyPath: keyPath) { slot.store(newValue, stored: stored) }
        suite.set(stored, forKey: fullKey)
        didSet?(old.value)
    }

    // MARK: - Properties

    /// Describes a persisted property of a non-isolated class.
    public func property<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)? = nil, didSet: ((Host, Value) -> Void)? = nil
    ) -> _DefaultsPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        return _DefaultsPropertyBinding(
            key: slot.key, keyPath: keyPath,
            load: { suite, fullKey in
                let resolved = slot.resolve(in: suite, fullKey: fullKey)
                slot.store(resolved.value, stored: resolved.stored)
            },
            apply: { suite, fullKey in
                guard let host = weakHost.object else { return }
                Self.apply(slot, suite: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                           willSet: willSet, didSet: didSet)
            })
    }

    /// Describes a persisted property of a main-actor class: outside changes are applied on the main actor.
    public func mainActorProperty<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, keyPath: KeyPath<Host, Value>, on host: Host,
        registrar: Observation.ObservationRegistrar,
        willSet: (@MainActor (Host, Value) -> Void)? = nil, didSet: (@MainActor (Host, Value) -> Void)? = nil
    ) -> _DefaultsPropertyBinding {
        let weakHost = _DefaultsWeak(host)
        let captured = _DefaultsUnchecked(wrapped: (slot, keyPath))
        return _DefaultsPropertyBinding(
            key: slot.key, keyPath: keyPath,
            load: { suite, fullKey in
                let resolved = slot.resolve(in: suite, fullKey: fullKey)
                slot.store(resolved.value, stored: resolved.stored)
            },
            apply: { suite, fullKey in
                let work: @MainActor @Sendable () -> Void = {
                    guard let host = weakHost.object else { return }
                    let (slot, keyPath) = captured.wrapped
                    Self.apply(slot, suite: suite, fullKey: fullKey, host: host, keyPath: keyPath, registrar: registrar,
                               willSet: willSet.map { body in { body($0, $1) } }, didSet: didSet.map { body in { body($0, $1) } })
                }
                if MainQueue.isCurrent {
                    MainActor.assumeIsolated { work() }
                } else {
                    DispatchQueue.main.async { work() }
                }
            })
    }

    private static func apply<Host: Observation.Observable & AnyObject, Value>(
        _ slot: _DefaultsSlot<Value>, suite: DefaultsSuite, fullKey: String, host: Host, keyPath: KeyPath<Host, Value>,
        registrar: Observation.ObservationRegistrar,
        willSet: ((Host, Value) -> Void)?, didSet: ((Host, Value) -> Void)?
    ) {
        let resolved = slot.resolve(in: suite, fullKey: fullKey)
        let old = slot.snapshot
        if old.stored == resolved.stored { return }
        willSet?(host, resolved.value)
        registrar.withMutation(of: host, keyPath: keyPath) { slot.store(resolved.value, stored: resolved.stored) }
        didSet?(host, old.value)
    }

    // MARK: - Start

    /// Loads every property from the suite and starts observing it (unless external changes are ignored).
    /// Properties whose key paths are in `ignoring` keep their loaded value but do not follow outside changes.
    public func start(_ list: _DefaultsPropertyList, ignoring: [AnyKeyPath]) {
        let (suite, prefix) = target
        var updaters: [String: [_DefaultsPropertyBinding]] = [:]
        for property in list.properties {
            let fullKey = prefix + property.key
            property.load(suite, fullKey)
            if !ignoring.contains(property.keyPath) { updaters[fullKey, default: []].append(property) }
        }
        let (ignoreExternal, limit) = state.withLock { state in
            state.updaters = updaters
            state.observation?.cancel()
            state.observation = nil
            return (state.ignoreExternalChanges, state.limitToInstance)
        }
        guard !ignoreExternal, !updaters.isEmpty else { return }
        let observation = suite.observe(keys: Set(updaters.keys), scope: limit ? .thisProcess : .allProcesses) { [weak self] change in
            self?.handle(change)
        }
        state.withLock { $0.observation = observation }
    }

    /// Routes a change to the properties mapped to the changed keys (cost proportional to the keys).
    func handle(_ change: DefaultsChange) {
        let (suite, updaters) = state.withLock { state in (state.suite, state.updaters) }
        guard let suite else { return }
        for key in change.keys {
            for property in updaters[key] ?? [] { property.apply(suite, key) }
        }
    }

    deinit {
        state.withLock { $0.observation?.cancel() }
    }
}
