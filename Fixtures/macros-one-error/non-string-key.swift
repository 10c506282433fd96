// A key of the wrong type: exactly one error, where the attribute is written (checked by
// ObservableDefaultsMacroTests/PluginDiagnosticsTests).
// expect: 10:35: error: cannot convert value of type 'Int' to expected argument type 'String'
import ObservableDefaults

let numericKey = 5

@ObservableDefaults
final class Settings {
    @DefaultsKey(userDefaultsKey: numericKey) var name = "n"
}
