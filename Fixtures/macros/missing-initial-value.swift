// expect: 7:9: error: property 'name' needs an initial value: it is the default used when the key is missing
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
final class Settings {
    var name: String
    init() { name = "x" }
}
