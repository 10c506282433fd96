// expect: 6:5: error: '@DefaultsBacked' can only be used on a property of an '@ObservableDefaults' class
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

final class Plain {
    @DefaultsBacked var x = 1
}
