// expect: 6:1: error: '@ObservableCloud' can only be applied to a class, not to a struct
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableCloud
struct Fleet {
    var workers = 4
}
