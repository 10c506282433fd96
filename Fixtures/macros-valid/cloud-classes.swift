// Cloud classes of every shape the cloud macros generate for; must type-check without errors or warnings
// (PluginDiagnosticsTests.validFixtureCompilesCleanly).
import Foundation
import ObservableDefaults

@ObservableCloud(prefix: "app_", syncImmediately: true)
public final class Fleet {
    public var workers = 4
    @CloudKey(keyValueStoreKey: "log-level") var logLevel: String = "info"
    @CloudBacked(keyValueStoreKey: "limit") var limit: Double? = nil
    var hosts: [String] = [] { didSet { print(oldValue) } }
    @ObservableOnly var lastSeen = Date()
    @Ignore var scratch = 0
}

@ObservableCloud
final class SendableSettings: Sendable {
    var name = "n"
    var count: Int = 0 { willSet { print(newValue) } }
}

@MainActor
@ObservableCloud(developmentMode: true)
public final class Model {
    public var count: Int = 0 {
        didSet { print(count) }
    }
    #if os(Linux)
    var linux = true
    #else
    var other = true
    #endif
    @CloudKey(keyValueStoreKey: #"vol\ume"#) var volume = 3
    enum Theme: String { case light, dark }
    var theme: Theme = .light
}

@ObservableCloud(autoInit: false, observeFirst: true)
final class Custom {
    @CloudBacked var stored = 1
    var transient = 2
    init(store: CloudKeyValueStore) {
        _prefix = "custom_"
        _syncImmediately = true
        _developmentMode = false
        _cloudStore = store
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

@ObservableCloud
final class Box<T> {
    var count = 0
    var label: String?
    @ObservableOnly var value: T
    init(value: T) {
        self.value = value
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

@MainActor func use() {
    let fleet = Fleet(prefix: "x_", store: .development)
    fleet.workers += 1
    print(fleet._developmentMode_, fleet.logLevel, fleet.limit as Any, fleet.hosts)
    let model = Model()
    model.count = 2
    print(model._developmentMode_, model.theme)
    let s = SendableSettings(syncImmediately: false, developmentMode: true)
    Task.detached { print(s.name) }
    _ = Custom(store: .development)
    _ = Box(value: 1.5).count
}
