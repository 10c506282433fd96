import Foundation
import Observation
@testable import ObservableDefaults

// Hand-written expansions of `@ObservableCloud` classes, exactly as the macro contract
// (`/work/briefs/cloud-contract.md`) says the plugin expands them. Each is preceded by the source it stands
// for: after the plugin lands, each class can be replaced by that source without touching the tests.
// `defaults-test-agent` holds the same `CloudFleet` (Sources/defaults-test-agent/CloudFleet.swift).

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

// @ObservableCloud(prefix: "fleet_", syncImmediately: true)
// final class CloudFleet {
//     var workers = 4
//     @CloudKey(keyValueStoreKey: "log-level") var logLevel: String = "info"
//     @CloudBacked(keyValueStoreKey: "limit") var limit: Double? = nil
//     var hosts: [String] = [] {
//         willSet { events.append("willSet \(newValue)") }
//         didSet { events.append("didSet \(oldValue) -> \(hosts)") }
//     }
//     var endpoint = CloudEndpoint(host: "localhost", port: 80)
//     @ObservableOnly var lastSeen = 0
//     @Ignore var scratch = 0
//     let events = CloudEventLog()
// }
final class CloudFleet {
    var workers: Int {
        get {
            _od_registrar.access(self, keyPath: \.workers)
            return _od_workers.value
        }
        set {
            _od_binding.set(newValue, slot: _od_workers, keyPath: \.workers, on: self, registrar: _od_registrar)
        }
    }
    var logLevel: String {
        get {
            _od_registrar.access(self, keyPath: \.logLevel)
            return _od_logLevel.value
        }
        set {
            _od_binding.set(newValue, slot: _od_logLevel, keyPath: \.logLevel, on: self, registrar: _od_registrar)
        }
    }
    var limit: Double? {
        get {
            _od_registrar.access(self, keyPath: \.limit)
            return _od_limit.value
        }
        set {
            _od_binding.set(newValue, slot: _od_limit, keyPath: \.limit, on: self, registrar: _od_registrar)
        }
    }
    var hosts: [String] {
        get {
            _od_registrar.access(self, keyPath: \.hosts)
            return _od_hosts.value
        }
        set {
            _od_binding.set(newValue, slot: _od_hosts, keyPath: \.hosts, on: self, registrar: _od_registrar, willSet: { self._od_willSet_hosts($0) }, didSet: { self._od_didSet_hosts($0) })
        }
    }
    private func _od_willSet_hosts(_ newValue: [String]) { events.append("willSet \(newValue)") }

    private func _od_didSet_hosts(_ oldValue: [String]) { events.append("didSet \(oldValue) -> \(hosts)") }
    var endpoint: CloudEndpoint {
        get {
            _od_registrar.access(self, keyPath: \.endpoint)
            return _od_endpoint.value
        }
        set {
            _od_binding.set(newValue, slot: _od_endpoint, keyPath: \.endpoint, on: self, registrar: _od_registrar)
        }
    }
    var lastSeen: Int {
        get {
            _od_registrar.access(self, keyPath: \.lastSeen)
            return _od_lastSeen.value
        }
        set {
            _od_lastSeen.set(newValue, notify: ObservableDefaults::_defaultsShouldNotify(_od_lastSeen.value, newValue), keyPath: \.lastSeen, on: self, registrar: _od_registrar)
        }
    }
    private let _od_lastSeen = ObservableDefaults::_DefaultsBox(0)
    var scratch = 0
    let events = CloudEventLog()

    // member role
    private let _od_registrar = Observation::ObservationRegistrar()

    private let _od_binding = ObservableDefaults::_CloudObjectBinding(prefix: "fleet_", syncImmediately: true, developmentMode: false, mainActor: false)

    private var _prefix: Swift::String {
        get { _od_binding.prefix }
        set { _od_binding.configure(prefix: newValue) }
    }

    private var _syncImmediately: Swift::Bool {
        get { _od_binding.syncImmediately }
        set { _od_binding.configure(syncImmediately: newValue) }
    }

    private var _developmentMode: Swift::Bool {
        get { _od_binding.developmentModeRequested }
        set { _od_binding.configure(developmentMode: newValue) }
    }

    var _developmentMode_: Swift::Bool { _od_binding.isDevelopmentMode }

    private var _cloudStore: ObservableDefaults::CloudKeyValueStore {
        get { _od_binding.store }
        set { _od_binding.configure(store: newValue) }
    }

    private var _cloudObserver: CloudObservation? = nil

    private final class CloudObservation {
        private let observation: ObservableDefaults::DefaultsObservation?
        init(host: CloudFleet, prefix: Swift::String) {
            host._od_binding.configure(prefix: prefix)
            observation = host._od_startCloudObservation()
        }
    }

    private let _od_workers = ObservableDefaults::_defaultsSlot(key: "workers", 4)
    private let _od_logLevel: ObservableDefaults::_DefaultsSlot<String> = ObservableDefaults::_defaultsSlot(key: "log-level", "info")
    private let _od_limit: ObservableDefaults::_DefaultsSlot<Double?> = ObservableDefaults::_defaultsOptionalSlot(key: "limit", nil)
    private let _od_hosts: ObservableDefaults::_DefaultsSlot<[String]> = ObservableDefaults::_defaultsSlot(key: "hosts", [])
    private let _od_endpoint = ObservableDefaults::_defaultsSlot(key: "endpoint", CloudEndpoint(host: "localhost", port: 80))

    init(prefix: Swift::String? = nil, syncImmediately: Swift::Bool = true, developmentMode: Swift::Bool = false, store: ObservableDefaults::CloudKeyValueStore? = nil) {
        _od_binding.configure(prefix: prefix, syncImmediately: syncImmediately, developmentMode: developmentMode, store: store)
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }

    private func _od_startCloudObservation() -> ObservableDefaults::DefaultsObservation? {
        let _od_properties = ObservableDefaults::_CloudPropertyList()
        _od_properties.append(_od_binding.property(_od_workers, keyPath: \CloudFleet.workers, on: self, registrar: _od_registrar))
        _od_properties.append(_od_binding.property(_od_logLevel, keyPath: \CloudFleet.logLevel, on: self, registrar: _od_registrar))
        _od_properties.append(_od_binding.property(_od_limit, keyPath: \CloudFleet.limit, on: self, registrar: _od_registrar))
        _od_properties.append(_od_binding.property(_od_hosts, keyPath: \CloudFleet.hosts, on: self, registrar: _od_registrar, willSet: { $0._od_willSet_hosts($1) }, didSet: { $0._od_didSet_hosts($1) }))
        _od_properties.append(_od_binding.property(_od_endpoint, keyPath: \CloudFleet.endpoint, on: self, registrar: _od_registrar))
        return _od_binding.start(_od_properties, isolation: #isolation)
    }

    // Test access to the generated private members (not part of the expansion).
    func stopObserving() { _cloudObserver = nil }
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

// extension role
extension CloudFleet: Observation.Observable {}

// @ObservableCloud(prefix: "main_")
// @MainActor final class CloudMainActorModel {
//     var theme = "light"
//     var size = 12 { didSet { events.append("didSet \(oldValue) -> \(size) on main: \(MainQueue.isCurrent)") } }
//     let events = CloudEventLog()
// }
@MainActor final class CloudMainActorModel {
    var theme: String {
        get {
            _od_registrar.access(self, keyPath: \.theme)
            return _od_theme.value
        }
        set {
            _od_binding.set(newValue, slot: _od_theme, keyPath: \.theme, on: self, registrar: _od_registrar)
        }
    }
    var size: Int {
        get {
            _od_registrar.access(self, keyPath: \.size)
            return _od_size.value
        }
        set {
            _od_binding.set(newValue, slot: _od_size, keyPath: \.size, on: self, registrar: _od_registrar, didSet: { self._od_didSet_size($0) })
        }
    }
    private func _od_didSet_size(_ oldValue: Int) { events.append("didSet \(oldValue) -> \(size) on main: \(MainQueue.isCurrent)") }
    let events = CloudEventLog()

    // member role
    private let _od_registrar = Observation::ObservationRegistrar()

    private let _od_binding = ObservableDefaults::_CloudObjectBinding(prefix: "main_", syncImmediately: false, developmentMode: false, mainActor: true)

    private var _prefix: Swift::String {
        get { _od_binding.prefix }
        set { _od_binding.configure(prefix: newValue) }
    }

    private var _syncImmediately: Swift::Bool {
        get { _od_binding.syncImmediately }
        set { _od_binding.configure(syncImmediately: newValue) }
    }

    private var _developmentMode: Swift::Bool {
        get { _od_binding.developmentModeRequested }
        set { _od_binding.configure(developmentMode: newValue) }
    }

    var _developmentMode_: Swift::Bool { _od_binding.isDevelopmentMode }

    private var _cloudStore: ObservableDefaults::CloudKeyValueStore {
        get { _od_binding.store }
        set { _od_binding.configure(store: newValue) }
    }

    private var _cloudObserver: CloudObservation? = nil

    private final class CloudObservation {
        private let observation: ObservableDefaults::DefaultsObservation?
        @MainActor init(host: CloudMainActorModel, prefix: Swift::String) {
            host._od_binding.configure(prefix: prefix)
            observation = host._od_startCloudObservation()
        }
    }

    private let _od_theme = ObservableDefaults::_defaultsSlot(key: "theme", "light")
    private let _od_size = ObservableDefaults::_defaultsSlot(key: "size", 12)

    init(prefix: Swift::String? = nil, syncImmediately: Swift::Bool = false, developmentMode: Swift::Bool = false, store: ObservableDefaults::CloudKeyValueStore? = nil) {
        _od_binding.configure(prefix: prefix, syncImmediately: syncImmediately, developmentMode: developmentMode, store: store)
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }

    private func _od_startCloudObservation() -> ObservableDefaults::DefaultsObservation? {
        let _od_properties = ObservableDefaults::_CloudPropertyList()
        _od_properties.append(_od_binding.mainActorProperty(_od_theme, keyPath: \CloudMainActorModel.theme, on: self, registrar: _od_registrar))
        _od_properties.append(_od_binding.mainActorProperty(_od_size, keyPath: \CloudMainActorModel.size, on: self, registrar: _od_registrar, didSet: { $0._od_didSet_size($1) }))
        return _od_binding.start(_od_properties, isolation: #isolation)
    }
}

extension CloudMainActorModel: Observation.Observable {}

// @ObservableCloud(autoInit: false)
// final class CloudCustomInitModel {
//     var volume = 5
//     init(store: CloudKeyValueStore, prefix: String) {
//         _prefix = prefix
//         _syncImmediately = true
//         _cloudStore = store
//         _cloudObserver = CloudObservation(host: self, prefix: _prefix)
//     }
// }
final class CloudCustomInitModel {
    var volume: Int {
        get {
            _od_registrar.access(self, keyPath: \.volume)
            return _od_volume.value
        }
        set {
            _od_binding.set(newValue, slot: _od_volume, keyPath: \.volume, on: self, registrar: _od_registrar)
        }
    }

    init(store: CloudKeyValueStore, prefix: String) {
        _prefix = prefix
        _syncImmediately = true
        _cloudStore = store
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }

    // member role
    private let _od_registrar = Observation::ObservationRegistrar()

    private let _od_binding = ObservableDefaults::_CloudObjectBinding(prefix: "", syncImmediately: false, developmentMode: false, mainActor: false)

    private var _prefix: Swift::String {
        get { _od_binding.prefix }
        set { _od_binding.configure(prefix: newValue) }
    }

    private var _syncImmediately: Swift::Bool {
        get { _od_binding.syncImmediately }
        set { _od_binding.configure(syncImmediately: newValue) }
    }

    private var _developmentMode: Swift::Bool {
        get { _od_binding.developmentModeRequested }
        set { _od_binding.configure(developmentMode: newValue) }
    }

    var _developmentMode_: Swift::Bool { _od_binding.isDevelopmentMode }

    private var _cloudStore: ObservableDefaults::CloudKeyValueStore {
        get { _od_binding.store }
        set { _od_binding.configure(store: newValue) }
    }

    private var _cloudObserver: CloudObservation? = nil

    private final class CloudObservation {
        private let observation: ObservableDefaults::DefaultsObservation?
        init(host: CloudCustomInitModel, prefix: Swift::String) {
            host._od_binding.configure(prefix: prefix)
            observation = host._od_startCloudObservation()
        }
    }

    private let _od_volume = ObservableDefaults::_defaultsSlot(key: "volume", 5)

    private func _od_startCloudObservation() -> ObservableDefaults::DefaultsObservation? {
        let _od_properties = ObservableDefaults::_CloudPropertyList()
        _od_properties.append(_od_binding.property(_od_volume, keyPath: \CloudCustomInitModel.volume, on: self, registrar: _od_registrar))
        return _od_binding.start(_od_properties, isolation: #isolation)
    }

    // Test access to the generated private members (not part of the expansion).
    var configuration: (prefix: String, syncImmediately: Bool, store: CloudKeyValueStore) { (_prefix, _syncImmediately, _cloudStore) }
}

extension CloudCustomInitModel: Observation.Observable {}
