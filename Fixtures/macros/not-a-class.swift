// expect: 6:1: error: '@ObservableDefaults' can only be applied to a class, not to a struct
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
struct Settings {
    var name = "n"
}
