// Keys that are not plain string literals (an interpolation, a concatenation, a member, a constant): exactly
// one error each, at the argument (PluginDiagnosticsTests.compilerReportsExactlyOneError counts them).
// expect: 22:38: error: 'userDefaultsKey' must be a string literal: the key is fixed at compile time
// expect: 23:35: error: 'userDefaultsKey' must be a string literal: the key is fixed at compile time
// expect: 28:36: error: 'keyValueStoreKey' must be a string literal: the key is fixed at compile time
// expect: 29:33: error: 'keyValueStoreKey' must be a string literal: the key is fixed at compile time
import ObservableDefaults

let user = "alice"
let workersKey = "workers"

enum Keys {
    static let workers = "workers"
}

@ObservableDefaults
final class Settings {
    var plain = 0
    // A literal in every form is fine.
    @DefaultsKey(userDefaultsKey: #"raw\key"#) var raw = 1
    @DefaultsBacked(userDefaultsKey: "esc\u{2E}aped") var escaped = 2
    @DefaultsBacked(userDefaultsKey: "user_\(user)") var name = "n"
    @DefaultsKey(userDefaultsKey: "a" + "b") var joined = "j"
}

@ObservableCloud
final class Fleet {
    @CloudBacked(keyValueStoreKey: Keys.workers) var workers = 4
    @CloudKey(keyValueStoreKey: workersKey) var spares = 1
}
