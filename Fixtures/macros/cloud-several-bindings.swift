// expect: 7:20: error: '@ObservableCloud' needs one property per declaration; 'second' shares its declaration with 'first'
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

@ObservableCloud
final class Fleet {
    var first = 1, second = 2
}
