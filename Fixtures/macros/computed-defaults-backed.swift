// expect: 7:25: error: '@DefaultsBacked' cannot be applied to a computed property
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
final class Settings {
    @DefaultsBacked var name: String { "n" }
}
