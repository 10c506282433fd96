/// The macros the plugin expands, named by the type their declarations give in `#externalMacro(type:)`.
public enum MacroName: String, CaseIterable, Sendable {
    case observableDefaults = "ObservableDefaultsMacro"
    case defaultsBacked = "DefaultsBackedMacro"
    case defaultsKey = "DefaultsKeyMacro"
    case observableCloud = "ObservableCloudMacro"
    case cloudBacked = "CloudBackedMacro"
    case cloudKey = "CloudKeyMacro"
    case observableOnly = "ObservableOnlyMacro"
    case ignore = "IgnoreMacro"

    /// What a macro does, whatever its family.
    public enum Kind: Sendable {
        /// Makes a class observable and generates its members (`@ObservableDefaults`, `@ObservableCloud`).
        case classMacro
        /// Persists a property (`@DefaultsBacked`, `@CloudBacked`).
        case persistedProperty
        /// Makes a property observable without persisting it (`@ObservableOnly`).
        case observableOnlyProperty
        /// A marker read by the class macro, expanding to nothing (`@DefaultsKey`, `@CloudKey`, `@Ignore`).
        case marker
    }

    /// What this macro does.
    public var kind: Kind {
        switch self {
        case .observableDefaults, .observableCloud: .classMacro
        case .defaultsBacked, .cloudBacked: .persistedProperty
        case .observableOnly: .observableOnlyProperty
        case .defaultsKey, .cloudKey, .ignore: .marker
        }
    }

    /// The family this macro belongs to; `nil` for the macros every family shares (`@ObservableOnly`,
    /// `@Ignore`), which take the family of the class they are used in.
    public var family: MacroFamily? {
        switch self {
        case .observableDefaults, .defaultsBacked, .defaultsKey: .defaults
        case .observableCloud, .cloudBacked, .cloudKey: .cloud
        case .observableOnly, .ignore: nil
        }
    }

    /// The attribute users write, without `@` (`DefaultsBacked`).
    public var attributeName: String { String(rawValue.dropLast("Macro".count)) }
}

/// The role the compiler asks a macro to expand in (`macroRole` of an attached-macro request).
public enum MacroRole: String, Sendable {
    case accessor, memberAttribute, member, peer, `extension`, conformance, body, preamble
}
