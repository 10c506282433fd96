// A suite name and prefixes that are not plain string literals: exactly one error each, at the argument
// (PluginDiagnosticsTests.compilerReportsExactlyOneError counts them).
// expect: 9:32: error: 'suiteName' must be a string literal: the suite name is fixed at compile time
// expect: 9:62: error: 'prefix' must be a string literal: the prefix is fixed at compile time
// expect: 14:26: error: 'prefix' must be a string literal: the prefix is fixed at compile time
import ObservableDefaults

let app = "daemon"
@ObservableDefaults(suiteName: "com.example." + app, prefix: "\(app).")
final class Settings {
    var name = "n"
}

@ObservableCloud(prefix: app)
final class Fleet {
    var workers = 4
}
