// A @CloudBacked key of the wrong type: exactly one error, where the attribute is written. Needs the cloud runtime:
// to be added to ObservableDefaultsMacroTests/PluginDiagnosticsTests.compilerReportsExactlyOneError once it is
// merged (checked against a stand-in of the contract's runtime signatures when written).
// expect: 11:36: error: cannot convert value of type 'Int' to expected argument type 'String'
import ObservableDefaults

let numericKey = 5

@ObservableCloud
final class Fleet {
    @CloudBacked(keyValueStoreKey: numericKey) var workers = 4
}
