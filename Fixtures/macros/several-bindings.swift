// expect: 7:20: error: '@ObservableDefaults' needs one property per declaration; 'second' shares its declaration with 'first'
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
final class Settings {
    var first = 1, second = 2
}
