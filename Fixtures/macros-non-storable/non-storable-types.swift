// Properties whose type cannot be stored: one error each, saying what to do (PluginDiagnosticsTests), not a
// list of every storage overload the compiler tried.
import ObservableDefaults

struct NotCodable {
    var x = 1
}

@ObservableDefaults
final class Settings {
    var fine = 0
    var broken = NotCodable()
    var brokenOptional: NotCodable? = nil
    @ObservableOnly var kept = NotCodable()
}

@ObservableCloud
final class Fleet {
    var fine = "a"
    var broken = NotCodable()
    @Ignore var ignored = NotCodable()
}
