/// The arguments of `@ObservableCloud`, with the Apple library's defaults.
public struct ObservableCloudOptions: Equatable, Sendable, ClassMacroOptions {
    /// Generate `init(prefix:syncImmediately:developmentMode:store:)`.
    public var autoInit = true
    /// Prepended to every property's key (trimmed; a `.` is allowed on this platform).
    public var prefix: String?
    /// Properties are `@ObservableOnly` unless marked `@CloudBacked`.
    public var observeFirst = false
    /// Synchronize the store after each write (the default of the generated initializer).
    public var syncImmediately = false
    /// Use the in-memory development store (the default of the generated initializer).
    public var developmentMode = false
    /// The class is main-actor isolated even without `@MainActor` (the module's default isolation).
    public var defaultIsolationIsMainActor = false

    /// The options of `@ObservableCloud` without arguments.
    public init() {}

    static func read(_ attribute: AttributeSyntax?, locator: SourceLocator) -> (
        ObservableCloudOptions, [MacroDiagnostic]
    ) {
        var reader = ArgumentReader(attribute, locator: locator)
        var options = ObservableCloudOptions()
        options.autoInit = reader.bool("autoInit", default: true)
        options.prefix = reader.string("prefix", subject: "prefix")?.trimmed
        options.observeFirst = reader.bool("observeFirst", default: false)
        options.syncImmediately = reader.bool("syncImmediately", default: false)
        options.developmentMode = reader.bool("developmentMode", default: false)
        options.defaultIsolationIsMainActor = reader.bool("defaultIsolationIsMainActor", default: false)
        return (options, reader.diagnostics)
    }
}
