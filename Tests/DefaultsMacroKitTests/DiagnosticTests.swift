import Testing

/// Diagnostics at the library level: exact UTF-8 file offsets (the node starts at file offset 100) and fix-its.
@Suite struct DiagnosticTests {
    static let base = 100
    let locator = SourceLocator(nodeOffset: base, triviaLength: 0)

    /// The file offset of the first occurrence of `needle` in `source`.
    func offset(of needle: String, in source: String, occurrence: Int = 0) -> Int {
        var rest = Substring(source)
        var consumed = 0
        for _ in 0..<occurrence {
            let range = rest.range(of: needle)!
            consumed += rest[rest.startIndex..<range.upperBound].utf8.count
            rest = rest[range.upperBound...]
        }
        let range = rest.range(of: needle)!
        return Self.base + consumed + rest[rest.startIndex..<range.lowerBound].utf8.count
    }

    @Test func macroOnANonClass() throws {
        for (keyword, article) in [("struct", "a"), ("enum", "an"), ("actor", "an"), ("protocol", "a")] {
            let decl = "\n// doc ü\n@ObservableDefaults\n\(keyword) Settings {\n    var x = 1\n}"
            let result = ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator)
            #expect(result.source == nil)
            let diagnostic = try #require(result.diagnostics.first)
            #expect(diagnostic.severity == .error)
            #expect(
                diagnostic.message
                    == "'@ObservableDefaults' can only be applied to a class, not to \(article) \(keyword)")
            #expect(diagnostic.offset == offset(of: keyword, in: decl))
            #expect(diagnostic.fixIts.isEmpty == (keyword != "struct"))
        }
        let decl = "@ObservableDefaults struct S {}"
        let fixIt = try #require(
            ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator
            ).diagnostics.first?.fixIts.first)
        #expect(
            fixIt.changes == [
                .init(
                    start: offset(of: "struct", in: decl), end: offset(of: "struct", in: decl) + 6,
                    newText: "final class")
            ])
        // The other roles stay silent (one error, not three) and never crash on garbage.
        #expect(ClassExpansion.extensions(decl: decl, extendedType: "S", conformances: nil) == .empty)
        #expect(
            ClassExpansion.memberAttributes(member: "var x = 1", parent: decl, attribute: "@ObservableDefaults")
                == .empty)
        #expect(
            ClassExpansion.members(decl: "", declLocator: locator, attribute: "", attributeLocator: locator).source
                == nil)
    }

    @Test func persistedPropertyWithoutInitialValue() throws {
        let decl = "\n    /* é */ var name: String"
        let result = PropertyExpansion.defaultsBackedAccessors(decl: decl, locator: locator)
        #expect(result.source == nil)
        let diagnostic = try #require(result.diagnostics.first)
        #expect(
            diagnostic.message
                == "property 'name' needs an initial value: it is the default used when the key is missing")
        #expect(diagnostic.offset == offset(of: "name", in: decl))
        #expect(diagnostic.highlights == [offset(of: "name", in: decl)..<offset(of: "name", in: decl) + 4])
        let end = Self.base + decl.utf8.count
        #expect(
            diagnostic.fixIts == [
                .init(
                    message: "add an initial value",
                    changes: [.init(start: end, end: end, newText: " = <#default value#>")])
            ])
        // An Optional defaults to nil: no error.
        #expect(
            PropertyExpansion.defaultsBackedAccessors(decl: "var name: String?", locator: locator).diagnostics.isEmpty)
        // Without a type nothing can be inferred.
        #expect(!PropertyExpansion.observableOnlyAccessors(decl: "var name", locator: locator).diagnostics.isEmpty)
    }

    @Test func letMarkedDefaultsBacked() throws {
        let decl = "@DefaultsBacked let name = \"n\""
        let diagnostic = try #require(
            PropertyExpansion.defaultsBackedAccessors(decl: decl, locator: locator).diagnostics.first)
        #expect(diagnostic.message == "'@DefaultsBacked' cannot be applied to a 'let' constant; use 'var'")
        let start = offset(of: "let", in: decl)
        #expect(diagnostic.offset == start)
        #expect(
            diagnostic.fixIts == [
                .init(
                    message: "replace 'let' with 'var'", changes: [.init(start: start, end: start + 3, newText: "var")])
            ])
    }

    @Test func computedMarkedDefaultsBacked() throws {
        for decl in [
            "@DefaultsBacked var name: String { \"n\" }", "@DefaultsBacked var name: String { get { \"n\" } set {} }"
        ] {
            let diagnostic = try #require(
                PropertyExpansion.defaultsBackedAccessors(decl: decl, locator: locator).diagnostics.first)
            #expect(diagnostic.message == "'@DefaultsBacked' cannot be applied to a computed property")
            #expect(diagnostic.offset == offset(of: "name", in: decl))
        }
        let function = try #require(
            PropertyExpansion.defaultsBackedAccessors(decl: "@DefaultsBacked func f() {}", locator: locator).diagnostics
                .first)
        #expect(function.message == "'@DefaultsBacked' can only be applied to a stored 'var' property, not to 'func'")
        let staticProperty = try #require(
            PropertyExpansion.defaultsBackedAccessors(decl: "@DefaultsBacked static var s = 1", locator: locator)
                .diagnostics.first)
        #expect(staticProperty.message == "'@DefaultsBacked' cannot be applied to a static property")
    }

    @Test func severalBindings() throws {
        let decl = "final class C {\n    public var first = 1, second: Int = 2, third = 3\n}"
        let result = ClassExpansion.members(
            decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator)
        let diagnostic = try #require(result.diagnostics.first)
        #expect(
            diagnostic.message
                == "'@ObservableDefaults' needs one property per declaration; 'second' shares its declaration with 'first'"
        )
        #expect(diagnostic.offset == offset(of: "second", in: decl))
        #expect(
            diagnostic.fixIts.first?.changes == [
                .init(
                    start: offset(of: ",", in: decl), end: offset(of: "second", in: decl), newText: "\n    public var "),
                .init(
                    start: offset(of: ",", in: decl, occurrence: 1), end: offset(of: "third", in: decl),
                    newText: "\n    public var ")
            ])
        // The property macro reports it too when applied explicitly.
        let explicit = PropertyExpansion.defaultsBackedAccessors(decl: "var a = 1, b = 2", locator: locator)
        #expect(explicit.diagnostics.first?.offset == Self.base + 11)
        // The member-attribute role does not attach an accessor macro the compiler would reject.
        #expect(
            ClassExpansion.memberAttributes(member: "var a = 1, b = 2", parent: decl, attribute: "@ObservableDefaults")
                == .empty)
    }

    @Test func nonLiteralArguments() throws {
        let attribute = "@ObservableDefaults(autoInit: flag, suiteName: name, prefix: \"a\\(b)\", observeFirst: true)"
        let result = ClassExpansion.members(
            decl: "class C { var x = 1 }", declLocator: locator, attribute: attribute, attributeLocator: locator)
        #expect(result.source != nil, "the expansion goes on with the defaults")
        #expect(
            result.diagnostics.map(\.message) == [
                "'autoInit' must be a Boolean literal ('true' or 'false')",
                "'suiteName' must be a string literal: the suite name is fixed at compile time",
                "'prefix' must be a string literal: the prefix is fixed at compile time"
            ])
        #expect(
            result.diagnostics.map(\.offset) == [
                offset(of: "flag", in: attribute), offset(of: "name", in: attribute), offset(of: "\"a", in: attribute)
            ])
        #expect(
            result.diagnostics[0].highlights == [
                offset(of: "flag", in: attribute)..<offset(of: "flag", in: attribute) + 4
            ])
        let nilSuite = ClassExpansion.members(
            decl: "class C {}", declLocator: locator,
            attribute: "@ObservableDefaults(suiteName: nil, prefix: #\"raw\"#)", attributeLocator: locator)
        #expect(nilSuite.diagnostics.isEmpty)
        #expect(nilSuite.source?.contains("suiteName: nil, prefix: \"raw\"") == true)
    }

    @Test func propertyMacroOutsideAnObservableDefaultsClass() throws {
        let attribute = PluginMessages.Syntax(
            kind: "attribute", source: "@DefaultsBacked", location: .init(fileName: "f", offset: 40))
        let problem = try #require(
            PropertyExpansion.contextProblem(
                macroName: "DefaultsBacked", enclosingType: "\nfinal class Plain {}", attribute: attribute))
        #expect(problem.message == "'@DefaultsBacked' can only be used on a property of an '@ObservableDefaults' class")
        #expect(problem.offset == 40 && problem.highlights == [40..<55])
        #expect(
            PropertyExpansion.contextProblem(
                macroName: "DefaultsBacked",
                enclosingType: "\n@MainActor\n@ObservableDefaults(prefix: \"x\")\nfinal class Good<T> {}",
                attribute: attribute) == nil)
        #expect(
            PropertyExpansion.contextProblem(
                macroName: "ObservableOnly", enclosingType: "struct S {}", attribute: attribute) != nil)
    }

    @Test func keyWarnings() throws {
        let decl = """
            final class C {
                @ObservableOnly @DefaultsKey(userDefaultsKey: "k") var transient = 1
                @DefaultsKey(userDefaultsKey: "shared") var a = 1
                @DefaultsBacked(userDefaultsKey: "shared") var b = 2
            }
            """
        let result = ClassExpansion.members(
            decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator)
        #expect(result.source != nil)
        #expect(result.diagnostics.map(\.severity) == [.warning, .warning])
        #expect(
            result.diagnostics.map(\.message) == [
                "'@DefaultsKey' has no effect: 'transient' is not stored",
                "'b' and 'a' are both stored under the key 'shared'"
            ])
        #expect(
            result.diagnostics.map(\.offset) == [offset(of: "@DefaultsKey", in: decl), offset(of: "b = 2", in: decl)])
    }

    @Test func invalidSuiteName() throws {
        for (name, message) in [
            ("\"a/b\"", "invalid suite name: 'a/b' contains '/'"),
            ("\"..\"", "invalid suite name: '..' is not a file name")
        ] {
            let attribute = "@ObservableDefaults(suiteName: \(name))"
            let diagnostic = try #require(
                ClassExpansion.members(
                    decl: "class C {}", declLocator: locator, attribute: attribute, attributeLocator: locator
                ).diagnostics.first)
            #expect(diagnostic.message == message)
            #expect(diagnostic.offset == offset(of: name, in: attribute))
        }
    }

    /// As in the Apple library: `suiteName: ""` (or only spaces) is the standard suite, and surrounding
    /// whitespace of `suiteName` and `prefix` is trimmed.
    @Test func suiteNameAndPrefixAreTrimmed() throws {
        let cases: [(String, String?, String?)] = [
            ("@ObservableDefaults(suiteName: \"\")", nil, nil),
            ("@ObservableDefaults(suiteName: \"  \", prefix: \" p_ \")", nil, "p_"),
            ("@ObservableDefaults(suiteName: \" group.app\\t\")", "group.app", nil)
        ]
        for (attribute, suiteName, prefix) in cases {
            var parser = DeclParser(attribute)
            let (options, diagnostics) = ObservableDefaultsOptions.read(
                parser.parseAttributes().first, locator: locator)
            #expect(diagnostics.isEmpty)
            #expect(options.suiteName == suiteName, "\(attribute)")
            #expect(options.prefix == prefix, "\(attribute)")
            let result = ClassExpansion.members(
                decl: "class C {}", declLocator: locator, attribute: attribute, attributeLocator: locator)
            #expect(result.diagnostics.isEmpty, "\(attribute)")
        }
    }

    @Test func mixingCloudAttributes() throws {
        let decl =
            "@ObservableDefaults final class C {\n    @CloudKey(keyValueStoreKey: \"k\") var a = 1\n    @CloudBacked var b = 2\n}"
        let result = ClassExpansion.members(
            decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator)
        #expect(result.hasErrors)
        #expect(
            result.diagnostics.map(\.offset) == [
                offset(of: "@CloudKey", in: decl), offset(of: "@CloudBacked", in: decl)
            ])
        #expect(
            result.diagnostics[0].fixIts.first?.changes == [
                .init(
                    start: offset(of: "@CloudKey", in: decl), end: offset(of: " var a", in: decl),
                    newText: "@DefaultsKey(userDefaultsKey: \"k\")")
            ])
        #expect(
            result.diagnostics[1].fixIts.first?.changes == [
                .init(
                    start: offset(of: "@CloudBacked", in: decl), end: offset(of: " var b", in: decl),
                    newText: "@DefaultsBacked")
            ])
        // The other family's persisted property gets a slot (its accessors name it) but not this family's attribute.
        #expect(
            result.source?.contains(
                "private let _od_b = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \"b\", 2))") == true)
        #expect(result.source?.contains("_od_binding.property(_od_b, keyPath: \\C.b,") == true)
        #expect(
            ClassExpansion.memberAttributes(
                member: "@CloudBacked var b = 2", parent: decl, attribute: "@ObservableDefaults") == .empty)
    }

    @Test func observersNeedAType() throws {
        let decl = "var value = makeValue() { didSet { } }"
        let diagnostic = try #require(
            PropertyExpansion.defaultsBackedAccessors(decl: decl, locator: locator).diagnostics.first)
        #expect(diagnostic.message == "property 'value' has 'willSet'/'didSet'; give it an explicit type annotation")
        #expect(diagnostic.offset == offset(of: " = make", in: decl))
        #expect(
            PropertyExpansion.defaultsBackedAccessors(decl: "var value = 1.5 { didSet { } }", locator: locator)
                .diagnostics.isEmpty)
        #expect(LiteralType.infer("Profile(name: \"x\", retries: 3)") == "Profile")
        #expect(LiteralType.infer("Foundation.URL(string: \"a\")!") == nil)
        #expect(LiteralType.infer("Foundation.Date()") == "Foundation.Date")
        #expect(LiteralType.infer("Box<Int>(1)") == "Box<Int>")
        #expect(LiteralType.infer("Profile(name: \"x\").renamed()") == nil)
        #expect(LiteralType.infer("makeValue()") == nil)
        #expect(LiteralType.infer("-2") == "Swift::Int")
    }
}
