// expect: 7:32: error: 'suiteName' must be a string literal: the suite name is fixed at compile time
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

let suiteName = "computed"

@ObservableDefaults(suiteName: suiteName)
final class Settings {
    var name = "n"
}
