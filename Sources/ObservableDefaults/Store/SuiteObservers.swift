import Synchronization

/// One change observer of a suite: which keys it hears, from where, and what it calls.
struct SuiteObserver: KeyFilteredObserver, Sendable {
    /// Cleared when the observation is cancelled and checked just before each handler call.
    let isActive = ActiveFlag()
    var filter: DefaultsKeyFilter
    var scope: DefaultsObservationScope
    var handler: @Sendable (DefaultsChange) -> Void

    /// Whether an observation is still live: cleared by `cancel()`, read before every call.
    final class ActiveFlag: Sendable {
        private let value = Atomic(true)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func clear() { value.store(false, ordering: .releasing) }
    }
}

/// The change observers of a suite, by token: who hears a key, and whether any observer hears other
/// processes (the file is watched while one does).
///
/// Kept under the storage's state lock together with memory: an observer hears a change exactly when it
/// was registered before the change became readable.
struct SuiteObservers {
    private var registry = ObserverRegistry<UInt64, SuiteObserver>()
    private var lastToken: UInt64 = 0

    var isEmpty: Bool { registry.isEmpty }

    /// Whether an observer hears changes made by other processes and by hand.
    var hearsOtherProcesses: Bool { registry.all.values.contains { $0.scope == .allProcesses } }

    /// Adds `observer`; returns its token.
    mutating func add(_ observer: SuiteObserver) -> UInt64 {
        lastToken += 1
        registry.insert(observer, for: lastToken)
        return lastToken
    }

    mutating func remove(_ token: UInt64) -> SuiteObserver? {
        registry.remove(token)
    }

    /// The observers that hear `key`, except the one with token `skipped`.
    func hearing(_ key: ExactKey, except skipped: UInt64? = nil) -> [SuiteObserver] {
        registry.observers(hearing: key, except: skipped)
    }

    /// The observers that hear at least one of `keys`.
    func hearing(anyOf keys: Set<ExactKey>) -> [SuiteObserver] {
        keys.isEmpty ? [] : registry.observers(hearingAnyOf: keys)
    }

    /// Calls each observer given (all of which hear `key`) with a change of `key`. Called with no lock held.
    static func notify(_ observers: [SuiteObserver], key: ExactKey, origin: DefaultsChangeOrigin) {
        let change = DefaultsChange(keys: [key.string], origin: origin)
        for observer in observers {
            if origin == .outside && observer.scope == .thisProcess { continue }
            if observer.isActive.isSet { observer.handler(change) }
        }
    }

    /// Calls each observer given with the keys among `keys` that it hears. Called with no lock held.
    /// `layer`: the layer the change came from when it is not the suite's file.
    static func notify(
        _ observers: [SuiteObserver], keys: Set<ExactKey>, origin: DefaultsChangeOrigin, layer: DefaultsOrigin? = nil
    ) {
        for observer in observers {
            if origin == .outside && observer.scope == .thisProcess { continue }
            if !observer.isActive.isSet { continue }
            let relevant = observer.filter.matching(keys)
            if !relevant.isEmpty { observer.handler(DefaultsChange(keys: relevant, origin: origin, layer: layer)) }
        }
    }
}
