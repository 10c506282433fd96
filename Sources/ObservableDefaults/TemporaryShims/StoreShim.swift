// TEMPORARY: an in-memory stand-in for the store being written on `main`, with the same signatures, so the
// macros compile and their tests run before the store lands. Deleted when `main` is merged.
import Foundation
import Synchronization

final class _ShimStorage: Sendable {
    struct Observer: Sendable {
        let id: Int
        let filter: DefaultsKeyFilter
        let scope: DefaultsObservationScope
        let handler: @Sendable (DefaultsChange) -> Void
    }
    struct State: Sendable {
        var values: [String: DefaultsValue] = [:]
        var registered: [String: DefaultsValue] = [:]
        var observers: [Observer] = []
        var nextID = 0
    }
    let state = Mutex(State())
    static let all = Mutex([String: _ShimStorage]())
    static func named(_ name: String) -> _ShimStorage {
        all.withLock { all in
            if let storage = all[name] { return storage }
            let storage = _ShimStorage()
            all[name] = storage
            return storage
        }
    }
}

public final class DefaultsSuite: Sendable {
    let storage: _ShimStorage
    public let name: String

    public init(name: String, directory: URL? = nil) throws {
        guard !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
            throw DefaultsError(.invalidSuiteName, message: "bad suite name '\(name)'")
        }
        self.name = (directory?.path ?? "") + "/" + name
        storage = _ShimStorage.named(self.name)
    }

    public convenience init(fileURL: URL) throws {
        try self.init(name: fileURL.lastPathComponent, directory: fileURL.deletingLastPathComponent())
    }

    public static let standard = try! DefaultsSuite(name: "standard")

    public func value(forKey key: String) -> DefaultsValue? {
        storage.state.withLock { $0.values[key] ?? $0.registered[key] }
    }

    public func storedValue(forKey key: String) -> DefaultsValue? {
        storage.state.withLock { $0.values[key] }
    }

    public func set(_ value: DefaultsValue?, forKey key: String) {
        let observers = storage.state.withLock { state -> [_ShimStorage.Observer] in
            guard state.values[key] != value else { return [] }
            state.values[key] = value
            return state.observers
        }
        for observer in observers where observer.filter.matches(key) {
            observer.handler(DefaultsChange(keys: [key], origin: .thisProcess))
        }
    }

    /// Shim only: simulates a change made by another process.
    func simulateOutsideChange(_ values: [String: DefaultsValue?]) {
        let observers = storage.state.withLock { state -> [_ShimStorage.Observer] in
            for (key, value) in values { state.values[key] = value }
            return state.observers
        }
        for observer in observers where observer.scope == .allProcesses {
            let keys = observer.filter.matching(Set(values.keys))
            if !keys.isEmpty { observer.handler(DefaultsChange(keys: keys, origin: .outside)) }
        }
    }

    public func register(defaults: [String: DefaultsValue]) {
        storage.state.withLock { $0.registered.merge(defaults) { $1 } }
    }

    public func observe(
        keys: Set<String>? = nil, prefix: String? = nil, scope: DefaultsObservationScope = .allProcesses,
        _ handler: @escaping @Sendable (DefaultsChange) -> Void
    ) -> DefaultsObservation {
        let storage = self.storage
        let id = storage.state.withLock { state in
            state.nextID += 1
            state.observers.append(.init(id: state.nextID, filter: DefaultsKeyFilter(keys: keys, prefix: prefix), scope: scope, handler: handler))
            return state.nextID
        }
        return DefaultsObservation {
            storage.state.withLock { $0.observers.removeAll { $0.id == id } }
        }
    }

    public func performBatchUpdates<R>(_ body: () throws -> R) rethrows -> R { try body() }

    func report(_ error: DefaultsError) {}
}

public final class DefaultsObservation: Sendable {
    let cancellation: Mutex<(@Sendable () -> Void)?>
    init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }
    public func cancel() { cancellation.withLock { $0 }?(); cancellation.withLock { $0 = nil } }
    deinit { cancel() }
}
