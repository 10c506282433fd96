// expect: 7:18: error: '@CloudBacked' cannot be applied to a 'let' constant; use 'var'
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableCloud(observeFirst: true)
final class Fleet {
    @CloudBacked let workers = 4
}
