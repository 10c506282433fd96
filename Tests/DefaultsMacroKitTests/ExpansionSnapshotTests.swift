import Testing

/// Expansion snapshots for every macro role and every `@ObservableDefaults` parameter.
@Suite struct ExpansionSnapshotTests {
    static let classBody = """
        final class Settings {
            var host = "localhost"
            @DefaultsKey(userDefaultsKey: "port") var port: Int = 8080
            var token: String? = nil
            @ObservableOnly var connected = false
            @Ignore var cache: [String: Int] = [:]
            @DefaultsBacked(userDefaultsKey: "t") var theme: Theme = .system
        }
        """
    static let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)

    func members(_ attribute: String, _ decl: String = classBody) -> String {
        let result = ClassExpansion.members(
            decl: decl, declLocator: Self.locator, attribute: attribute, attributeLocator: Self.locator)
        #expect(!result.hasErrors)
        return result.source ?? "<nil>"
    }

    static let parameterCases: [(String, String)] = [
        ("member-default", "@ObservableDefaults"),
        ("member-autoInit-false", "@ObservableDefaults(autoInit: false)"),
        ("member-ignoreExternalChanges", "@ObservableDefaults(ignoreExternalChanges: true)"),
        ("member-suiteName", #"@ObservableDefaults(suiteName: "com.example.daemon")"#),
        ("member-prefix", #"@ObservableDefaults(prefix: "net_")"#),
        ("member-observeFirst", "@ObservableDefaults(observeFirst: true)"),
        ("member-limitToInstance", "@ObservableDefaults(limitToInstance: true)"),
        ("member-defaultIsolationIsMainActor", "@ObservableDefaults(defaultIsolationIsMainActor: true)"),
        (
            "member-all",
            #"@ObservableDefaults(autoInit: true, ignoreExternalChanges: false, suiteName: "s", prefix: "p.", observeFirst: false, limitToInstance: false, defaultIsolationIsMainActor: false)"#
        )
    ]

    @Test(arguments: parameterCases)
    func memberRole(name: String, attribute: String) {
        assertSnapshot(members(attribute), named: name)
    }

    @Test func memberRoleForPublicMainActorClassWithObservers() {
        let decl = """
            @MainActor public final class Model {
                public var count: Int = 0 {
                    didSet { print(count) }
                }
                #if os(Linux)
                var linux = true
                #endif
            }
            """
        assertSnapshot(members("@ObservableDefaults", decl), named: "member-public-mainactor")
    }

    @Test func memberRoleForGenericClassWithoutInitialValues() {
        let decl = """
            final class Box<T> {
                var count = 0
                @ObservableOnly var value: T
            }
            """
        assertSnapshot(members("@ObservableDefaults", decl), named: "member-generic-no-autoinit")
    }

    @Test func memberAttributeRole() {
        func attribute(_ member: String, _ macro: String = "@ObservableDefaults") -> String? {
            ClassExpansion.memberAttributes(member: member, parent: Self.classBody, attribute: macro).source
        }
        #expect(attribute("var x = 1") == "@DefaultsBacked")
        #expect(attribute("var x = 1", "@ObservableDefaults(observeFirst: true)") == "@ObservableOnly")
        #expect(attribute("@DefaultsKey(userDefaultsKey: \"k\") var x = 1") == "@DefaultsBacked")
        #expect(attribute("@DefaultsBacked var x = 1") == "")
        #expect(attribute("@ObservableOnly var x = 1") == "")
        #expect(attribute("@Ignore var x = 1") == "")
        #expect(attribute("@ObservationIgnored var x = 1") == "")
        #expect(attribute("let x = 1") == "")
        #expect(attribute("static var x = 1") == "")
        #expect(attribute("class var x: Int { 1 }") == "")
        #expect(attribute("lazy var x = 1") == "")
        #expect(attribute("weak var delegate: AnyObject?") == "")
        #expect(attribute("unowned var owner: AnyObject") == "")
        #expect(attribute("var x: Int { 1 }") == "")
        #expect(attribute("var x: Int { get { 1 } set { } }") == "")
        #expect(attribute("var x = 1 { didSet { } }") == "@DefaultsBacked")
        #expect(attribute("func f() {}") == "")
        #expect(attribute("init() {}") == "")
        #expect(
            ClassExpansion.memberAttributes(
                member: "var x = 1", parent: "struct S {}", attribute: "@ObservableDefaults"
            ).source == "")
    }

    @Test func extensionRole() {
        #expect(
            ClassExpansion.extensions(
                decl: Self.classBody, extendedType: "Settings", conformances: "struct P: Observable {}"
            ).source
                == "extension Settings: ObservableDefaults::_DefaultsObservable {\n}")
        #expect(
            ClassExpansion.extensions(decl: Self.classBody, extendedType: "Settings", conformances: "").source == "")
        #expect(ClassExpansion.extensions(decl: "struct S {}", extendedType: "S", conformances: nil).source == "")
    }

    static let propertyCases: [(String, String, String)] = [
        ("backed-untyped", "@DefaultsBacked", #"var host = "localhost""#),
        ("backed-typed", "@DefaultsBacked", "var port: Int = 8080"),
        ("backed-optional", "@DefaultsBacked", "var token: String? = nil"),
        ("backed-optional-no-initializer", "@DefaultsBacked", "var token: Optional<String>"),
        ("backed-key", #"@DefaultsBacked(userDefaultsKey: "custom")"#, "var value = 1.5"),
        ("backed-key-raw", ##"@DefaultsBacked(userDefaultsKey: #"raw\key"#)"##, "var volume = 3"),
        (
            "backed-defaultskey-multiline", "@DefaultsBacked",
            "@DefaultsKey(userDefaultsKey: \"\"\"\n    ui.\\\n    scale\n    \"\"\") var scale = 1.0"
        ),
        ("backed-defaultskey", "@DefaultsBacked", #"@DefaultsKey(userDefaultsKey: "port") var port: Int = 8080"#),
        (
            "backed-observers", "@DefaultsBacked",
            "var count = 0 {\n    willSet { print(newValue) }\n    didSet(old) { print(old, count) }\n}"
        ),
        ("backed-backticked", "@DefaultsBacked", "var `default` = \"d\""),
        ("only-untyped", "@ObservableOnly", "var connected = false"),
        ("only-typed", "@ObservableOnly", "var items: [String] = []"),
        ("only-no-initializer", "@ObservableOnly", "var value: T"),
        ("only-observers", "@ObservableOnly", "var n: Int = 0 { didSet { print(oldValue) } }")
    ]

    @Test(arguments: propertyCases)
    func propertyRoles(name: String, attribute: String, decl: String) {
        let accessors: ExpansionResult
        let peers: ExpansionResult
        var slot: String?
        if attribute.hasPrefix("@DefaultsBacked") {
            accessors = PropertyExpansion.defaultsBackedAccessors(
                decl: decl, locator: Self.locator, attribute: attribute)
            peers = PropertyExpansion.defaultsBackedPeers(decl: decl)
            var parser = DeclParser(attribute + " " + decl)
            slot = parser.parseMember().flatMap { PropertyExpansion.slotDeclaration($0, check: "check0") }
        } else {
            accessors = PropertyExpansion.observableOnlyAccessors(decl: decl, locator: Self.locator)
            peers = PropertyExpansion.observableOnlyPeers(decl: decl)
        }
        #expect(accessors.diagnostics.isEmpty)
        var text = "// accessors\n\(accessors.source ?? "<nil>")\n// peers\n\(peers.source ?? "<nil>")\n"
        if let slot { text += "// slot (declared by the class's member role)\n\(slot)\n" }
        assertSnapshot(text, named: name)
    }

    @Test func markerMacrosExpandToNothing() {
        let request = PluginMessages.ExpandAttached(
            macro: .init(moduleName: "ObservableDefaultsMacros", typeName: "IgnoreMacro", name: "Ignore"),
            macroRole: "peer",
            attributeSyntax: .init(kind: "attribute", source: "@Ignore", location: .init(fileName: "f", offset: 0)),
            declSyntax: .init(
                kind: "declaration", source: "@Ignore var x = 1", location: .init(fileName: "f", offset: 0)))
        #expect(MacroDispatcher.expand(request) == .empty)
    }
}
