// A @CloudBacked key of the wrong type: exactly one error, where the attribute is written
// (PluginDiagnosticsTests.compilerReportsExactlyOneError): the generated code adds no second error
// about the same mistake.
// expect: 11:36: error: cannot convert value of type 'Int' to expected argument type 'String'
import ObservableDefaults

let numericKey = 5

@ObservableCloud
final class Fleet {
    @CloudBacked(keyValueStoreKey: numericKey) var workers = 4
}
