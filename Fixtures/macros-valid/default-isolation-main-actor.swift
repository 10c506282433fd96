// Compiled with `-default-isolation MainActor` by ObservableDefaultsMacroTests/PluginDiagnosticsTests:
// must type-check without errors or warnings.
import ObservableDefaults

@ObservableDefaults(suiteName: "fixture.default-isolation", defaultIsolationIsMainActor: true)
final class Settings {
    var name = "n"
    var count: Int = 0 {
        didSet { print(count) }
    }
    @ObservableOnly var transient = false
}

func use() {
    let settings = Settings()
    settings.count += 1
    print(settings.name, settings.transient)
}
