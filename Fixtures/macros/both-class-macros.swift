// expect: 6:1: error: '@ObservableDefaults' and '@ObservableCloud' cannot be applied to the same class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
@ObservableCloud
final class Settings {
    var name = "n"
}
