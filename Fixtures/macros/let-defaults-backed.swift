// expect: 7:21: error: '@DefaultsBacked' cannot be applied to a 'let' constant; use 'var'
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults(observeFirst: true)
final class Settings {
    @DefaultsBacked let name = "n"
}
