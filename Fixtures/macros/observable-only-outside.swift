// expect: 6:5: error: '@ObservableOnly' can only be used on a property of an '@ObservableDefaults' or '@ObservableCloud' class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

final class Plain {
    @ObservableOnly var workers = 4
}
