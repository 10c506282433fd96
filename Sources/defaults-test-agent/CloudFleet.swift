import Foundation
import Observation
import ObservableDefaults

// The `@ObservableCloud` class of the cloud object tests (the same source as `CloudFleet` in
// Tests/ObservableDefaultsTests/Cloud/CloudModels.swift: keep them equal).

/// A Codable (not property-list) value, stored as its natural structure.
struct CloudEndpoint: Codable, Equatable, Sendable {
    var host: String
    var port: Int
}

/// What `willSet` / `didSet` bodies saw, from any thread.
final class CloudEventLog: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var stored: [String] = []
    var events: [String] { lock.withLock { stored } }
    func append(_ event: String) { lock.withLock { stored.append(event) } }
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
