import Foundation
import Observation
@testable import ObservableDefaults

// The `@ObservableCloud` classes of the cloud object tests. `defaults-test-agent` declares the same
// `CloudFleet` (Sources/defaults-test-agent/CloudFleet.swift), so two processes share one class.

/// A Codable (not property-list) value, stored as its natural structure.
struct CloudEndpoint: Codable, Equatable, Sendable {
    var host: String
    var port: Int
}

/// What `willSet` / `didSet` bodies saw, from any thread.
final class CloudEventLog: Sendable {
    private let state = Locked<[String]>([])
    var events: [String] { state.withLock { $0 } }
    func append(_ event: String) { state.withLock { $0.append(event) } }
}

@ObservableCloud(prefix: "fleet_", syncImmediately: true)
final class CloudFleet {
    var workers = 4
    @CloudKey(keyValueStoreKey: "log-level") var logLevel: String = "info"
    @CloudBacked(keyValueStoreKey: "limit") var limit: Double? = nil
    var hosts: [String] = [] {
        willSet { events.append("willSet \(newValue)") }
        didSet { events.append("didSet \(oldValue) -> \(hosts)") }
    }
    var endpoint = CloudEndpoint(host: "localhost", port: 80)
    @ObservableOnly var lastSeen = 0
    @Ignore var scratch = 0
    let events = CloudEventLog()
}

@ObservableCloud(prefix: "main_")
@MainActor final class CloudMainActorModel {
    var theme = "light"
    var size = 12 { didSet { events.append("didSet \(oldValue) -> \(size) on main: \(MainQueue.isCurrent)") } }
    let events = CloudEventLog()
}

@ObservableCloud(autoInit: false)
final class CloudCustomInitModel {
    var volume = 5
    init(store: CloudKeyValueStore, prefix: String) {
        _prefix = prefix
        _syncImmediately = true
        _cloudStore = store
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}
// The tests' access to generated private members (an extension in the class's file sees them).
extension CloudFleet {
    func stopObserving() { _cloudObserver = nil }
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

extension CloudCustomInitModel {
    var configuration: (prefix: String, syncImmediately: Bool, store: CloudKeyValueStore) {
        (_prefix, _syncImmediately, _cloudStore)
    }
}
