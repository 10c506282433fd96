// Compiled with `-default-isolation MainActor`: must type-check without errors or warnings
// (PluginDiagnosticsTests.validFixtureCompilesCleanly).
import ObservableDefaults

@ObservableCloud(defaultIsolationIsMainActor: true)
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
    print(settings.name, settings.transient, settings._developmentMode_)
}
