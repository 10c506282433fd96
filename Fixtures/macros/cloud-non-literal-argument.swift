// expect: 7:35: error: 'syncImmediately' must be a Boolean literal ('true' or 'false')
// Expected diagnostics are checked by ObservableDefaultsMacroTests/PluginDiagnosticsTests.
import ObservableDefaults

let eager = true

@ObservableCloud(syncImmediately: eager)
final class Fleet {
    var workers = 4
}
