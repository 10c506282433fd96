import Foundation
import ObservableDefaults

enum Theme: String, Codable, Sendable {
    case light, dark, system
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var retries: Int
}

@ObservableDefaults(suiteName: "macro-tests.settings", prefix: "net_")
final class Settings: Sendable {
    var host = "localhost"
    @DefaultsKey(userDefaultsKey: "port") var port: Int = 8080
    var theme: Theme = .system
    var profile = Profile(name: "x", retries: 3)
    var token: String? = nil
    @ObservableOnly var connected = false
    @Ignore let cache: [String: Int] = [:]
}

/// Three persisted properties and one observable-only, for the observation matrix.
@ObservableDefaults(suiteName: "macro-tests.matrix", prefix: "m_")
final class Matrix: Sendable {
    var a = 1
    var b = "b"
    var c: [Int] = []
    var d: Double? = nil
    @ObservableOnly var o = 0
}

let observerLog = EventLog()

@ObservableDefaults(prefix: "obs.")
final class WithObservers: Sendable {
    var value: Int = 0 {
        willSet { observerLog.append("willSet \(value)->\(newValue)") }
        didSet { observerLog.append("didSet \(oldValue)->\(value)") }
    }
    var named = "x" {
        willSet(next) { observerLog.append("named will \(next)") }
        didSet(previous) { observerLog.append("named did \(previous)") }
    }
    var profile = Profile(name: "p", retries: 0) {
        didSet { observerLog.append("profile did \(oldValue.name)->\(profile.name)") }
    }
    @ObservableOnly var local: Int = 0 {
        didSet { observerLog.append("local did \(oldValue)->\(local)") }
    }
}

@ObservableDefaults(autoInit: false, suiteName: "macro-tests.custom")
final class CustomInit {
    var username = "guest"
    var age: Int = 18

    init(suite: DefaultsSuite, username: String) {
        _ = suite
        self.username = username
        observerStarter()
    }

    init() {
        observerStarter()
    }
}

/// Logs each evaluation of a declaration default.
let defaultEvaluations = EventLog()
func loggedDefault<T>(_ label: String, _ value: T) -> T {
    defaultEvaluations.append(label)
    return value
}

/// Declaration defaults with a side effect, to count how often an object evaluates them.
@ObservableDefaults(autoInit: false)
final class LoggedDefaults {
    var persisted = loggedDefault("persisted", 1)
    @ObservableOnly var local = loggedDefault("local", 2)
    @ObservableOnly var withoutDefault: Int

    init(suite: DefaultsSuite, persisted: Int) {
        withoutDefault = 3
        _userDefaults = suite
        self.persisted = persisted
        local = 20
        observerStarter()
    }
}

@ObservableDefaults(autoInit: false)
final class CustomSuiteInit {
    var username = "guest"
    var age: Int = 18
}

@ObservableDefaults(observeFirst: true)
final class ObserveFirst {
    var notStored = 1
    @DefaultsBacked var stored = 2
    @DefaultsBacked(userDefaultsKey: "custom") var keyed = "k"
}

@ObservableDefaults(ignoreExternalChanges: true)
final class IgnoresExternal {
    var value = 0
}

@ObservableDefaults(limitToInstance: true)
final class LimitedToInstance {
    var value = 0
}

@MainActor
@ObservableDefaults
final class MainActorModel {
    var value = 0
}

/// Marks the main queue, to check that code runs on the main actor's executor.
let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

@ObservableDefaults(defaultIsolationIsMainActor: true)
@MainActor
final class DefaultIsolationModel {
    var value: Int = 0 {
        didSet {
            changes.append(value)
            onMainThread.append(DispatchQueue.getSpecific(key: mainQueueKey) == true)
        }
    }
    @ObservableOnly var changes: [Int] = []
    @ObservableOnly var onMainThread: [Bool] = []
}

/// A RawRepresentable that is also a property-list value: stored as its raw value, read back from either.
struct Wrapped: RawRepresentable, DefaultsValueConvertible, Codable, Equatable, Sendable {
    var rawValue: String
    init(rawValue: String) { self.rawValue = rawValue }
    init?(defaultsValue: DefaultsValue) {
        guard case .dictionary(let d) = defaultsValue, case .string(let s)? = d["wrapped"] else { return nil }
        rawValue = s
    }
    var defaultsValue: DefaultsValue { .dictionary(["wrapped": .string(rawValue)]) }
}

@ObservableDefaults
final class StorageModel: Sendable {
    var theme: Theme = .system
    var themeOptional: Theme? = .light
    var profile = Profile(name: "x", retries: 3)
    var profileOptional: Profile? = nil
    var wrapped = Wrapped(rawValue: "w")
    var strings: [String] = ["a"]
    var dictionary: [String: Int] = ["a": 1]
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var url = URL(string: "https://example.org")!
    var optionalInt: Int? = 5
    var optionalWithoutInitializer: String?
}

enum LogLevel: String, Codable, CaseIterable, Sendable {
    case light, dark, system
}

/// A daemon's limits: a Codable value whose members a person edits by hand.
struct Limits: Codable, Equatable, Sendable {
    struct Server: Codable, Equatable, Sendable {
        var port: Int
    }

    var cpu: Double
    var memory: Int
    var servers: [Server] = []
}

/// A Codable property of a hand-edited file.
@ObservableDefaults(prefix: "svc.")
final class ServiceSettings: Sendable {
    var limits = Limits(cpu: 1, memory: 256)
}

/// What a daemon reads from a hand-edited file.
@ObservableDefaults(prefix: "daemon.")
final class DaemonSettings: Sendable {
    var level: LogLevel = .system
    var count = 1
    var limit: Int? = 25
}

/// Keys written as string literals of every form (a key must be a literal: anything else is a compile error).
@ObservableDefaults(prefix: "k.")
final class LiteralKeys: Sendable {
    @DefaultsKey(userDefaultsKey: "audio.volume") var volume = 3
    @DefaultsKey(userDefaultsKey: #"ui\scale"#) var scale = 1.0
    @DefaultsBacked(userDefaultsKey: "ui\u{2E}theme") var theme = "light"
    @DefaultsBacked(userDefaultsKey: nil) var named = "n"
    @DefaultsKey(
        userDefaultsKey: """
            multi.\
            line
            """) var multiLine = 0
    @DefaultsKey var bare = 0
    @DefaultsKey() var bareParentheses = 0
}
