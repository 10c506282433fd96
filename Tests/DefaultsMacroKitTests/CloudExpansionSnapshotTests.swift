import Testing

/// Expansion snapshots of the cloud family (`@ObservableCloud`, `@CloudBacked`, `@CloudKey`) for every
/// parameter. `cloud-member-contract.txt` is the member role of the interface contract with the runtime,
/// copied verbatim but for one token (`nonisolated(unsafe)` on `_cloudObserver`, so that a `Sendable` class
/// compiles): the runtime's tests hand-write that expansion, so it must not change by accident.
@Suite struct CloudExpansionSnapshotTests {
    static let classBody = """
        final class Settings {
            var host = "localhost"
            @CloudKey(keyValueStoreKey: "port") var port: Int = 8080
            var token: String? = nil
            @ObservableOnly var connected = false
            @Ignore var cache: [String: Int] = [:]
            @CloudBacked(keyValueStoreKey: "t") var theme: Theme = .system
        }
        """
    static let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)

    func members(_ attribute: String, _ decl: String = classBody) -> String {
        let result = ClassExpansion.members(
            decl: decl, declLocator: Self.locator, attribute: attribute, attributeLocator: Self.locator, family: .cloud)
        #expect(!result.hasErrors, "\(result.diagnostics)")
        return result.source ?? "<nil>"
    }

    /// A `Sendable` cloud class compiles only if the one generated stored `var` is `nonisolated(unsafe)`
    /// (checked with the compiler: a plain `private var` is "stored property '_cloudObserver' of
    /// 'Sendable'-conforming class is mutable").
    @Test func cloudObserverIsTheOnlyStoredVarAndIsNonisolatedUnsafe() {
        let lines = members("@ObservableCloud").split(separator: "\n")
        let storedVars = lines.filter { $0.contains("var ") && !$0.hasSuffix("{") && !$0.contains("{ _od_binding") }
        #expect(storedVars == ["nonisolated(unsafe) private var _cloudObserver: CloudObservation? = nil"])
    }

    @Test func contractExample() {
        let decl = """
            @ObservableCloud(prefix: "app_", syncImmediately: true)
            public final class Fleet {
                public var workers = 4
                @CloudKey(keyValueStoreKey: "log-level") var logLevel: String = "info"
                @CloudBacked(keyValueStoreKey: "limit") var limit: Double? = nil
                var hosts: [String] = [] { didSet { print(oldValue) } }
                @ObservableOnly var lastSeen = Date()
                @Ignore var scratch = 0
            }
            """
        assertSnapshot(
            members(#"@ObservableCloud(prefix: "app_", syncImmediately: true)"#, decl), named: "cloud-member-contract")
    }

    static let parameterCases: [(String, String)] = [
        ("cloud-member-default", "@ObservableCloud"),
        ("cloud-member-prefix", #"@ObservableCloud(prefix: " net.cloud_ ")"#),
        ("cloud-member-syncImmediately", "@ObservableCloud(syncImmediately: true)"),
        ("cloud-member-developmentMode", "@ObservableCloud(developmentMode: true)"),
        ("cloud-member-autoInit-false", "@ObservableCloud(autoInit: false)"),
        ("cloud-member-observeFirst", "@ObservableCloud(observeFirst: true)"),
        ("cloud-member-defaultIsolationIsMainActor", "@ObservableCloud(defaultIsolationIsMainActor: true)"),
        (
            "cloud-member-all",
            #"@ObservableCloud(autoInit: true, prefix: nil, observeFirst: false, syncImmediately: true, developmentMode: true, defaultIsolationIsMainActor: false)"#
        )
    ]

    @Test(arguments: parameterCases)
    func memberRole(name: String, attribute: String) {
        assertSnapshot(members(attribute), named: name)
    }

    @Test func memberRoleForPublicMainActorClassWithObserversAndIfConfig() {
        let decl = """
            @MainActor public final class Model {
                public var count: Int = 0 {
                    willSet { print(newValue) }
                    didSet { print(count) }
                }
                #if os(Linux)
                var linux = true
                #elseif os(macOS)
                var mac = true
                #endif
            }
            """
        assertSnapshot(members("@ObservableCloud", decl), named: "cloud-member-public-mainactor")
    }

    @Test func memberRoleForPackageGenericClassWithoutInitialValues() {
        let decl = """
            package final class Box<T> {
                var count = 0
                var label: String?
                @ObservableOnly var value: T
            }
            """
        assertSnapshot(members("@ObservableCloud", decl), named: "cloud-member-package-generic-no-autoinit")
    }

    /// `@CloudBacked(keyValueStoreKey:)` wins over `@CloudKey(keyValueStoreKey:)`, else the property name; a
    /// key that is not a string literal (an error its attribute reports) is skipped; the defaults family's
    /// label means nothing here.
    @Test func keys() {
        let decl = #"""
            final class Keys {
                @CloudKey(keyValueStoreKey: "key-only") var a = 1
                @CloudBacked(keyValueStoreKey: "backed-only") var b = 2
                @CloudKey(keyValueStoreKey: "loses") @CloudBacked(keyValueStoreKey: "wins") var c = 3
                @CloudKey(keyValueStoreKey: #"raw\d"#) var d = 4
                @CloudBacked(keyValueStoreKey: "\(base).scale") var e = 5.0
                @CloudKey var f = 6
                @CloudBacked(keyValueStoreKey: nil) @CloudKey(keyValueStoreKey: "from-key") var g = 7
            }
            """#
        let slots = members("@ObservableCloud", decl).split(separator: "\n").filter {
            $0.hasPrefix("private let _od_") && $0 != "private let _od_registrar = Observation::ObservationRegistrar()"
                && !$0.hasPrefix("private let _od_binding")
        }
        #expect(
            slots == [
                #"private let _od_a = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "key-only", 1))"#,
                #"private let _od_b = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "backed-only", 2))"#,
                #"private let _od_c = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "wins", 3))"#,
                #"private let _od_d = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "raw\\d", 4))"#,
                #"private let _od_e = _od_Storable.check1(ObservableDefaults::_defaultsSlot(key: "e", 5.0))"#,
                #"private let _od_f = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "f", 6))"#,
                #"private let _od_g = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "from-key", 7))"#
            ])
        // The defaults family's label is not a cloud key (the compiler rejects the argument label itself).
        let wrongLabel = members("@ObservableCloud", #"final class K { @CloudKey(userDefaultsKey: "x") var a = 1 }"#)
        #expect(wrongLabel.contains(#"_defaultsSlot(key: "a", 1)"#))
    }

    @Test func memberAttributeRole() {
        func attribute(_ member: String, _ macro: String = "@ObservableCloud") -> String? {
            ClassExpansion.memberAttributes(member: member, parent: Self.classBody, attribute: macro, family: .cloud)
                .source
        }
        #expect(attribute("var x = 1") == "@CloudBacked")
        #expect(attribute("var x = 1", "@ObservableCloud(observeFirst: true)") == "@ObservableOnly")
        #expect(attribute("@CloudKey(keyValueStoreKey: \"k\") var x = 1") == "@CloudBacked")
        #expect(attribute("@CloudBacked var x = 1") == "")
        #expect(attribute("@CloudBacked var x = 1", "@ObservableCloud(observeFirst: true)") == "")
        #expect(attribute("@ObservableOnly var x = 1") == "")
        #expect(attribute("@Ignore var x = 1") == "")
        #expect(attribute("let x = 1") == "")
        #expect(attribute("var x: Int { 1 }") == "")
        #expect(attribute("var x = 1 { didSet { } }") == "@CloudBacked")
        // The other family's persisted attribute: reported by the member role, nothing added here.
        #expect(attribute("@DefaultsBacked var x = 1") == "")
        // The defaults family's key attribute does not make a cloud property anything else.
        #expect(attribute("@DefaultsKey(userDefaultsKey: \"k\") var x = 1") == "@CloudBacked")
    }

    @Test func extensionRoleIsTheDefaultsFamilys() throws {
        let request = PluginMessages.ExpandAttached(
            macro: .init(
                moduleName: "ObservableDefaultsMacros", typeName: "ObservableCloudMacro", name: "ObservableCloud"),
            macroRole: "extension",
            attributeSyntax: .init(
                kind: "attribute", source: "@ObservableCloud", location: .init(fileName: "f", offset: 0)),
            declSyntax: .init(
                kind: "declaration", source: "@ObservableCloud final class Fleet {}",
                location: .init(fileName: "f", offset: 0)),
            extendedTypeSyntax: .init(kind: "type", source: "Fleet", location: .init(fileName: "f", offset: 0)))
        #expect(
            MacroDispatcher.expand(request).source == "extension Fleet: ObservableDefaults::_DefaultsObservable {\n}")
    }

    /// `@CloudBacked`'s accessors and peers are exactly `@DefaultsBacked`'s, through the dispatcher.
    @Test(arguments: [
        "var host = \"localhost\"",
        "var count: Int = 0 {\n    willSet { print(newValue) }\n    didSet(old) { print(old) }\n}", "var token: String?"
    ])
    func cloudBackedExpandsLikeDefaultsBacked(decl: String) {
        func expand(_ typeName: String, _ attribute: String, _ role: String, _ classMacro: String) -> ExpansionResult {
            MacroDispatcher.expand(
                PluginMessages.ExpandAttached(
                    macro: .init(moduleName: "ObservableDefaultsMacros", typeName: typeName, name: attribute),
                    macroRole: role,
                    attributeSyntax: .init(
                        kind: "attribute", source: "@" + attribute, location: .init(fileName: "f", offset: 0)),
                    declSyntax: .init(
                        kind: "declaration", source: "@\(attribute) " + decl, location: .init(fileName: "f", offset: 0)),
                    lexicalContext: [
                        .init(
                            kind: "declaration", source: "@\(classMacro)\nfinal class C {}",
                            location: .init(fileName: "f", offset: 0))
                    ]))
        }
        for role in ["accessor", "peer"] {
            let cloud = expand("CloudBackedMacro", "CloudBacked", role, "ObservableCloud")
            let defaults = expand("DefaultsBackedMacro", "DefaultsBacked", role, "ObservableDefaults")
            #expect(cloud == defaults, "\(role)")
            #expect(cloud.diagnostics.isEmpty)
        }
        #expect(
            expand("CloudBackedMacro", "CloudBacked", "accessor", "ObservableCloud").source?.contains(
                "_od_binding.set(newValue, slot: _od_") == true)
    }
}
