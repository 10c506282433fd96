// expect: 7:5: error: '@DefaultsBacked' belongs to '@ObservableDefaults'; use '@CloudBacked' in an '@ObservableCloud' class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableCloud
final class Fleet {
    @DefaultsBacked(userDefaultsKey: "w") var workers = 4
}
