// expect: 6:5: error: '@CloudBacked' can only be used on a property of an '@ObservableCloud' class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

final class Plain {
    @CloudBacked var workers = 4
}
