/// The literal arguments of a class macro (`@ObservableDefaults`, `@ObservableCloud`), and the members
/// that only its family generates. The parts every family shares (slots, registrations, the property
/// roles) are in ``ClassExpansion``.
protocol ClassMacroOptions: Sendable {
    /// Generate the family's initializer (when every stored property has an initial value).
    var autoInit: Bool { get }
    /// Properties are `@ObservableOnly` unless marked with the family's persisted attribute.
    var observeFirst: Bool { get }
    /// The class is main-actor isolated even without `@MainActor` (the module's default isolation).
    var defaultIsolationIsMainActor: Bool { get }

    /// Reads the arguments of `attribute` (missing ones take their defaults) and reports every argument
    /// that is not a valid literal.
    static func read(_ attribute: AttributeSyntax?, locator: SourceLocator) -> (Self, [MacroDiagnostic])

    /// The text of the class macro's member role for `context`, whose options are `self`.
    func memberText(_ context: ClassExpansion.Context) -> String
}

extension ClassMacroOptions {
    /// ``read(_:locator:)`` for a family whose options type is known only at run time.
    static func readOptions(_ attribute: AttributeSyntax?, locator: SourceLocator) -> (
        any ClassMacroOptions, [MacroDiagnostic]
    ) {
        let (options, diagnostics) = read(attribute, locator: locator)
        return (options, diagnostics)
    }
}
