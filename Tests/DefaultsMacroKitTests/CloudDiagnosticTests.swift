import Testing

/// Diagnostics of the cloud family: exact UTF-8 file offsets (the node starts at file offset 100) and fix-its.
@Suite struct CloudDiagnosticTests {
    static let base = 100
    let locator = SourceLocator(nodeOffset: base, triviaLength: 0)

    /// The file offset of the first occurrence of `needle` in `source`.
    func offset(of needle: String, in source: String) -> Int {
        let range = source.range(of: needle)!
        return Self.base + source[source.startIndex..<range.lowerBound].utf8.count
    }

    func members(_ decl: String, attribute: String = "@ObservableCloud") -> ExpansionResult {
        ClassExpansion.members(
            decl: decl, declLocator: locator, attribute: attribute, attributeLocator: locator, family: .cloud)
    }

    @Test func nonLiteralArguments() throws {
        let attribute =
            "@ObservableCloud(autoInit: flag, prefix: \"a\\(b)\", observeFirst: 1, syncImmediately: sync, developmentMode: \"yes\", defaultIsolationIsMainActor: isMain)"
        let result = members("class C { var x = 1 }", attribute: attribute)
        #expect(result.source != nil, "the expansion goes on with the defaults")
        #expect(
            result.diagnostics.map(\.message) == [
                "'autoInit' must be a Boolean literal ('true' or 'false')",
                "'prefix' must be a string literal: the prefix is fixed at compile time",
                "'observeFirst' must be a Boolean literal ('true' or 'false')",
                "'syncImmediately' must be a Boolean literal ('true' or 'false')",
                "'developmentMode' must be a Boolean literal ('true' or 'false')",
                "'defaultIsolationIsMainActor' must be a Boolean literal ('true' or 'false')"
            ])
        #expect(
            result.diagnostics.map(\.offset)
                == ["flag", "\"a", "1,", "sync,", "\"yes", "isMain"].map { offset(of: $0, in: attribute) })
        #expect(
            result.diagnostics[3].highlights == [
                offset(of: "sync,", in: attribute)..<offset(of: "sync,", in: attribute) + 4
            ])
        // The defaults with which the expansion went on.
        #expect(
            result.source?.contains(
                #"_CloudObjectBinding(prefix: "", syncImmediately: false, developmentMode: false, mainActor: false)"#)
                == true)
    }

    @Test func literalArguments() throws {
        var parser = DeclParser(
            ##"@ObservableCloud(autoInit: false, prefix: #" raw.p_ "#, observeFirst: true, syncImmediately: true, developmentMode: true, defaultIsolationIsMainActor: true)"##
        )
        let (options, diagnostics) = ObservableCloudOptions.read(parser.parseAttributes().first, locator: locator)
        #expect(diagnostics.isEmpty)
        var expected = ObservableCloudOptions()
        expected.autoInit = false
        expected.prefix = "raw.p_"
        expected.observeFirst = true
        expected.syncImmediately = true
        expected.developmentMode = true
        expected.defaultIsolationIsMainActor = true
        #expect(options == expected)
        // A `.` in the prefix is allowed (upstream refuses it only with a runtime assertion).
        #expect(members("class C {}", attribute: #"@ObservableCloud(prefix: "a.b.")"#).diagnostics.isEmpty)
        #expect(
            members("class C {}", attribute: #"@ObservableCloud(prefix: nil)"#).source?.contains(#"(prefix: "", "#)
                == true)
        // The defaults family's arguments are not the cloud's: ignored here, rejected by the compiler.
        #expect(members("class C {}", attribute: #"@ObservableCloud(suiteName: "a/b")"#).diagnostics.isEmpty)
    }

    @Test func macroOnANonClass() throws {
        let decl = "@ObservableCloud\nstruct Fleet {\n    var x = 1\n}"
        let result = members(decl)
        #expect(result.source == nil)
        let diagnostic = try #require(result.diagnostics.first)
        #expect(diagnostic.message == "'@ObservableCloud' can only be applied to a class, not to a struct")
        #expect(diagnostic.offset == offset(of: "struct", in: decl))
        #expect(
            diagnostic.fixIts.first?.changes == [
                .init(
                    start: offset(of: "struct", in: decl), end: offset(of: "struct", in: decl) + 6,
                    newText: "final class")
            ])
        #expect(
            ClassExpansion.memberAttributes(
                member: "var x = 1", parent: decl, attribute: "@ObservableCloud", family: .cloud) == .empty)
        #expect(ClassExpansion.extensions(decl: decl, extendedType: "Fleet", conformances: nil) == .empty)
    }

    @Test func severalBindingsAndMissingInitialValue() throws {
        let decl = "final class C {\n    var first = 1, second = 2\n}"
        let diagnostic = try #require(members(decl).diagnostics.first)
        #expect(
            diagnostic.message
                == "'@ObservableCloud' needs one property per declaration; 'second' shares its declaration with 'first'"
        )
        #expect(diagnostic.offset == offset(of: "second", in: decl))
        #expect(
            diagnostic.fixIts.first?.changes == [
                .init(start: offset(of: ",", in: decl), end: offset(of: "second", in: decl), newText: "\n    var ")
            ])
        let missing = try #require(
            PropertyExpansion.defaultsBackedAccessors(
                decl: "var name: String", locator: locator, attributeName: "CloudBacked"
            ).diagnostics.first)
        #expect(
            missing.message == "property 'name' needs an initial value: it is the default used when the key is missing")
        let constant = try #require(
            PropertyExpansion.defaultsBackedAccessors(
                decl: "@CloudBacked let name = \"n\"", locator: locator, attributeName: "CloudBacked"
            ).diagnostics.first)
        #expect(constant.message == "'@CloudBacked' cannot be applied to a 'let' constant; use 'var'")
        #expect(constant.fixIts.first?.changes.first?.newText == "var")
    }

    /// The defaults family's attributes in a cloud class: one error each with a fix-it to the cloud
    /// counterpart (label included); the property gets a slot under its name (its own accessors name it, so
    /// they add no error) and no second persisted attribute.
    @Test func defaultsAttributesInACloudClass() throws {
        let decl =
            "@ObservableCloud final class C {\n    @DefaultsKey(userDefaultsKey: \"k\") var a = 1\n    @DefaultsBacked(userDefaultsKey: Keys.b) var b = 2\n    @DefaultsBacked var c = 3\n}"
        let result = members(decl)
        #expect(result.diagnostics.map(\.severity) == [.error, .error, .error])
        #expect(
            result.diagnostics.map(\.message) == [
                "'@DefaultsKey' belongs to '@ObservableDefaults'; use '@CloudKey' in an '@ObservableCloud' class",
                "'@DefaultsBacked' belongs to '@ObservableDefaults'; use '@CloudBacked' in an '@ObservableCloud' class",
                "'@DefaultsBacked' belongs to '@ObservableDefaults'; use '@CloudBacked' in an '@ObservableCloud' class"
            ])
        #expect(
            result.diagnostics.map { $0.fixIts.first?.changes.first?.newText } == [
                "@CloudKey(keyValueStoreKey: \"k\")", "@CloudBacked(keyValueStoreKey: Keys.b)", "@CloudBacked"
            ])
        #expect(
            result.diagnostics[0].fixIts.first?.changes.first.map { $0.start..<$0.end }
                == offset(of: "@DefaultsKey", in: decl)..<offset(of: " var a", in: decl))
        let source = try #require(result.source)
        #expect(
            source.contains("_od_a = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \"a\", 1))"),
            "a @DefaultsKey is no cloud key")
        #expect(
            source.contains("_od_b = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \"b\", 2))")
                && source.contains("_od_c = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \"c\", 3))"))
        #expect(
            source.contains("_od_binding.property(_od_b, keyPath: \\C.b,")
                && source.contains("_od_binding.property(_od_c, keyPath: \\C.c,"))
        #expect(
            ClassExpansion.memberAttributes(
                member: "@DefaultsBacked var c = 3", parent: decl, attribute: "@ObservableCloud", family: .cloud)
                == .empty)
    }

    /// Both class macros on one class: only the second one reports, at its attribute, and adds nothing.
    @Test func bothClassMacros() throws {
        for (first, second, family, other) in [
            ("ObservableCloud", "ObservableDefaults", MacroFamily.defaults, MacroFamily.cloud),
            ("ObservableDefaults", "ObservableCloud", .cloud, .defaults)
        ] {
            let decl = "@\(first)\n@MainActor @\(second)(prefix: \"p\") final class C {\n    var x = 1\n}"
            let secondResult = ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@\(second)(prefix: \"p\")", attributeLocator: locator,
                family: family)
            #expect(secondResult.source == nil)
            let diagnostic = try #require(secondResult.diagnostics.first)
            #expect(secondResult.diagnostics.count == 1)
            #expect(diagnostic.message == "'@\(first)' and '@\(second)' cannot be applied to the same class")
            let start = offset(of: "@\(second)", in: decl), end = offset(of: " final", in: decl)
            #expect(diagnostic.offset == start && diagnostic.highlights == [start..<end])
            #expect(diagnostic.fixIts.first?.changes == [.init(start: start, end: end, newText: "")])
            #expect(
                ClassExpansion.memberAttributes(
                    member: "var x = 1", parent: decl, attribute: "@\(second)", family: family) == .empty)
            #expect(
                ClassExpansion.extensions(decl: decl, extendedType: "C", conformances: nil, family: family) == .empty)
            #expect(
                ClassExpansion.extensions(decl: decl, extendedType: "C", conformances: nil, family: other).source?
                    .hasPrefix("extension C:") == true)
            let firstResult = ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@\(first)", attributeLocator: locator, family: other)
            #expect(firstResult.diagnostics.isEmpty && firstResult.source != nil)
            #expect(
                ClassExpansion.memberAttributes(
                    member: "var x = 1", parent: decl, attribute: "@\(first)", family: other
                ).source == "@" + other.persistedAttribute)
        }
    }

    @Test func keyWarnings() throws {
        let decl = """
            final class C {
                @ObservableOnly @CloudKey(keyValueStoreKey: "k") var transient = 1
                @CloudKey(keyValueStoreKey: "shared") var a = 1
                @CloudBacked(keyValueStoreKey: "shared") var b = 2
                var shared = 3
            }
            """
        let result = members(decl)
        #expect(result.source != nil)
        #expect(result.diagnostics.map(\.severity) == [.warning, .warning, .warning])
        #expect(
            result.diagnostics.map(\.message) == [
                "'@CloudKey' has no effect: 'transient' is not stored",
                "'b' and 'a' are both stored under the key 'shared'",
                "'shared' and 'a' are both stored under the key 'shared'"
            ])
        #expect(
            result.diagnostics.map(\.offset) == [
                offset(of: "@CloudKey", in: decl), offset(of: "b = 2", in: decl), offset(of: "shared = 3", in: decl)
            ])
        let observeFirst = members(
            "final class C {\n    @CloudKey(keyValueStoreKey: \"k\") var x = 1\n}",
            attribute: "@ObservableCloud(observeFirst: true)")
        #expect(
            observeFirst.diagnostics.map(\.message) == [
                "'@CloudKey' has no effect: 'x' is not stored (in observeFirst mode, mark it '@CloudBacked')"
            ])
    }
}
