/// The macros the plugin expands, named by the type their declarations give in `#externalMacro(type:)`.
public enum MacroName: String, CaseIterable, Sendable {
    case observableDefaults = "ObservableDefaultsMacro"
    case defaultsBacked = "DefaultsBackedMacro"
    case defaultsKey = "DefaultsKeyMacro"
    case observableOnly = "ObservableOnlyMacro"
    case ignore = "IgnoreMacro"

    /// What a macro does, whatever its family.
    public enum Kind: Sendable {
        /// Makes a class observable and generates its members (`@ObservableDefaults`).
        case classMacro
        /// Persists a property (`@DefaultsBacked`).
        case persistedProperty
        /// Makes a property observable without persisting it (`@ObservableOnly`).
        case observableOnlyProperty
        /// A marker read by the class macro, expanding to nothing (`@DefaultsKey`, `@Ignore`).
        case marker
    }

    /// What this macro does.
    public var kind: Kind {
        switch self {
        case .observableDefaults: .classMacro
        case .defaultsBacked: .persistedProperty
        case .observableOnly: .observableOnlyProperty
        case .defaultsKey, .ignore: .marker
        }
    }

    /// The family whose class macro this macro works with; the shared property macros belong to the
    /// family of the class they are used in (the defaults family until there is a second one).
    public var family: MacroFamily { .defaults }

    /// The attribute users write, without `@` (`DefaultsBacked`).
    public var attributeName: String { String(rawValue.dropLast("Macro".count)) }
}

/// The role the compiler asks a macro to expand in (`macroRole` of an attached-macro request).
public enum MacroRole: String, Sendable {
    case accessor, memberAttribute, member, peer, `extension`, conformance, body, preamble
}
