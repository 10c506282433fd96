// expect: 7:32: error: 'suiteName' must be a string literal without interpolation
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

let suiteName = "computed"

@ObservableDefaults(suiteName: suiteName)
final class Settings {
    var name = "n"
}
