// expect: 7:5: error: '@CloudKey' belongs to '@ObservableCloud'; use '@DefaultsKey' in an '@ObservableDefaults' class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableDefaults
final class Settings {
    @CloudKey(keyValueStoreKey: "k") var name = "n"
}
