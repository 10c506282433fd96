// Properties whose type cannot be stored: one error each, naming the type and saying what to do
// (PluginDiagnosticsTests), not a list of every storage overload the compiler tried.
import ObservableDefaults

struct NotCodable {
    var x = 1
    static let standard = NotCodable()
    static func make() -> NotCodable { NotCodable() }
}

@ObservableDefaults
final class Settings {
    var fine = 0
    var broken = NotCodable()
    var brokenOptional: NotCodable? = nil
    var annotated: NotCodable = .standard
    var list: [NotCodable] = []
    var spelledOut: Optional<NotCodable> = nil
    var viaInit = NotCodable.init(x: 2)
    var viaStatic = NotCodable.standard
    var unknown = NotCodable.make()
    @ObservableOnly var kept = NotCodable()
}

@ObservableCloud
final class Fleet {
    var fine = "a"
    var broken = NotCodable()
    var brokenOptional: NotCodable? = nil
    @Ignore var ignored = NotCodable()
}
