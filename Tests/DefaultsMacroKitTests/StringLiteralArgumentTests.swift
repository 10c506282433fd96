import Testing

/// Keys, prefixes and suite names must be plain string literals (as in the Apple library): anything else —
/// an interpolation, a concatenation, a name, a member, a call — is one error at the argument, whichever
/// roles the compiler asks the plugin for, and no expansion reads a key the user did not write.
@Suite struct StringLiteralArgumentTests {
    /// The non-literal forms, with the text to look for where the argument's value starts.
    static let nonLiterals: [String] = [
        #""user_\(x)""#,  // interpolation
        #""a" + "b""#,  // concatenation
        "keyName",  // identifier
        "Keys.name",  // member access
        "Keys.name()",  // call
        ##"#"raw\#(x)"#"##,  // interpolation in a raw string
        "\"\"\"\n        multi \\(x)\n        \"\"\"",  // multi-line literal with interpolation
        #"("k")"#  // parenthesised
    ]

    /// A file with one class, as the compiler would see it, and the requests it sends the plugin for it.
    struct File {
        let text: String
        let classAttribute: String
        let member: String
        let family: MacroFamily

        init(classAttribute: String, member: String, family: MacroFamily) {
            self.classAttribute = classAttribute
            self.member = member
            self.family = family
            text =
                "import ObservableDefaults\n\nlet x = 1\n\n\(classAttribute)\nfinal class Settings {\n    \(member)\n}\n"
        }

        /// The UTF-8 offset of the first occurrence of `needle` at or after `from`.
        func offset(of needle: String, from: Int = 0) -> Int {
            let bytes = Array(text.utf8), pattern = Array(needle.utf8)
            for start in from...(bytes.count - pattern.count)
            where Array(bytes[start..<start + pattern.count]) == pattern {
                return start
            }
            Issue.record("'\(needle)' not in the file")
            return -1
        }

        func syntax(_ kind: String, _ source: String, at offset: Int) -> PluginMessages.Syntax {
            .init(kind: kind, source: source, location: .init(fileName: "/tmp/f.swift", offset: offset))
        }

        func request(
            _ macro: MacroName, _ role: String, attribute: PluginMessages.Syntax, decl: PluginMessages.Syntax,
            parent: PluginMessages.Syntax? = nil, context: [PluginMessages.Syntax]? = nil
        ) -> PluginMessages.ExpandAttached {
            PluginMessages.ExpandAttached(
                macro: .init(
                    moduleName: "ObservableDefaultsMacros", typeName: macro.rawValue, name: macro.attributeName),
                macroRole: role, attributeSyntax: attribute, declSyntax: decl, parentDeclSyntax: parent,
                extendedTypeSyntax: role == "extension" ? syntax("type", "Settings", at: offset(of: "Settings")) : nil,
                conformanceListSyntax: role == "extension"
                    ? syntax("type", "struct P: Observation.Observable {}", at: 0) : nil,
                lexicalContext: context)
        }

        /// Every diagnostic of every role the compiler expands for the class: the class macro's member,
        /// member-attribute and extension roles, then each property macro on the member (written, or added by
        /// the member-attribute role) in each of its roles.
        func allDiagnostics() -> [MacroDiagnostic] {
            let classMacro: MacroName = family == .defaults ? .observableDefaults : .observableCloud
            let classStart = offset(of: classAttribute)
            let classSource = String(
                decoding: Array(text.utf8)[classStart..<offset(of: "}\n", from: classStart) + 1], as: UTF8.self)
            let classSyntax = syntax("declaration", classSource, at: classStart)
            let classAttributeSyntax = syntax("attribute", classAttribute, at: classStart)
            let memberStart = offset(of: "\n    ", from: classStart)
            let memberSyntax = syntax("declaration", "\n    " + member, at: memberStart)
            var results = [
                MacroDispatcher.expand(
                    request(classMacro, "member", attribute: classAttributeSyntax, decl: classSyntax)),
                MacroDispatcher.expand(
                    request(classMacro, "extension", attribute: classAttributeSyntax, decl: classSyntax))
            ]
            let added = MacroDispatcher.expand(
                request(
                    classMacro, "memberAttribute", attribute: classAttributeSyntax, decl: memberSyntax,
                    parent: syntax("declaration", classAttribute + "\nfinal class Settings {", at: classStart)))
            results.append(added)
            // The property attributes: those written on the member, then the one the class macro adds.
            var attributes: [PluginMessages.Syntax] = []
            var parser = DeclParser(member)
            let base = memberStart + "\n    ".utf8.count
            for attribute in parser.parseMember()?.attributes ?? [] {
                let start = attribute.start, end = attribute.end
                let source = String(decoding: Array(member.utf8)[start..<end], as: UTF8.self)
                attributes.append(syntax("attribute", source, at: base + start))
            }
            if let source = added.source, !source.isEmpty { attributes.append(syntax("attribute", source, at: base)) }
            let context = [syntax("declaration", classAttribute + "\nfinal class Settings {}", at: classStart)]
            for attribute in attributes {
                var attributeParser = DeclParser(attribute.source)
                guard let name = attributeParser.parseAttributes().first?.name,
                    let macro = MacroName.allCases.first(where: { $0.attributeName == name })
                else { continue }
                let roles = macro.kind == .marker ? ["peer"] : ["accessor", "peer"]
                for role in roles {
                    results.append(
                        MacroDispatcher.expand(
                            request(macro, role, attribute: attribute, decl: memberSyntax, context: context)))
                }
            }
            return results.flatMap(\.diagnostics)
        }

        /// Expects exactly one diagnostic, the error at `value` (the argument's value, which it highlights).
        func expectOneError(_ message: String, at value: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let diagnostics = allDiagnostics()
            #expect(diagnostics.count == 1, "\(diagnostics.map(\.message))\n\(text)", sourceLocation: sourceLocation)
            guard let diagnostic = diagnostics.first else { return }
            let start = offset(of: value, from: offset(of: classAttribute))
            #expect(diagnostic.severity == .error, sourceLocation: sourceLocation)
            #expect(diagnostic.message == message, sourceLocation: sourceLocation)
            #expect(diagnostic.offset == start, "\(text)", sourceLocation: sourceLocation)
            #expect(diagnostic.highlights == [start..<start + value.utf8.count], sourceLocation: sourceLocation)
            #expect(diagnostic.fixIts.isEmpty, sourceLocation: sourceLocation)
        }
    }

    static let keyMessage = "' must be a string literal: the key is fixed at compile time"

    @Test(arguments: nonLiterals)
    func defaultsBackedKey(value: String) {
        File(
            classAttribute: "@ObservableDefaults",
            member: "@DefaultsBacked(userDefaultsKey: \(value)) var name = \"n\"", family: .defaults
        )
        .expectOneError("'userDefaultsKey" + Self.keyMessage, at: value)
    }

    @Test(arguments: nonLiterals)
    func defaultsKeyKey(value: String) {
        File(
            classAttribute: "@ObservableDefaults", member: "@DefaultsKey(userDefaultsKey: \(value)) var name = \"n\"",
            family: .defaults
        )
        .expectOneError("'userDefaultsKey" + Self.keyMessage, at: value)
        // Also where the key has no effect (observeFirst without @DefaultsBacked): the class macro warns about that.
        let unused = File(
            classAttribute: "@ObservableDefaults(observeFirst: true)",
            member: "@DefaultsKey(userDefaultsKey: \(value)) var name = \"n\"", family: .defaults)
        #expect(unused.allDiagnostics().map(\.severity).sorted { $0.rawValue < $1.rawValue } == [.error, .warning])
    }

    @Test(arguments: nonLiterals)
    func cloudBackedKey(value: String) {
        File(
            classAttribute: "@ObservableCloud", member: "@CloudBacked(keyValueStoreKey: \(value)) var name = \"n\"",
            family: .cloud
        )
        .expectOneError("'keyValueStoreKey" + Self.keyMessage, at: value)
    }

    @Test(arguments: nonLiterals)
    func cloudKeyKey(value: String) {
        File(
            classAttribute: "@ObservableCloud", member: "@CloudKey(keyValueStoreKey: \(value)) var name = \"n\"",
            family: .cloud
        )
        .expectOneError("'keyValueStoreKey" + Self.keyMessage, at: value)
    }

    /// Both attributes with a bad key: one error each, at each argument.
    @Test func bothAttributesOfOneProperty() {
        let file = File(
            classAttribute: "@ObservableDefaults",
            member: #"@DefaultsKey(userDefaultsKey: a) @DefaultsBacked(userDefaultsKey: "b\(x)") var name = "n""#,
            family: .defaults)
        let diagnostics = file.allDiagnostics()
        #expect(
            diagnostics.map(\.message) == ["'userDefaultsKey" + Self.keyMessage, "'userDefaultsKey" + Self.keyMessage])
        #expect(Set(diagnostics.map(\.offset)) == [file.offset(of: "a)"), file.offset(of: #""b\(x)""#)])
    }

    @Test(arguments: nonLiterals)
    func suiteName(value: String) {
        File(classAttribute: "@ObservableDefaults(suiteName: \(value))", member: "var name = \"n\"", family: .defaults)
            .expectOneError("'suiteName' must be a string literal: the suite name is fixed at compile time", at: value)
    }

    @Test(arguments: nonLiterals)
    func defaultsPrefix(value: String) {
        File(classAttribute: "@ObservableDefaults(prefix: \(value))", member: "var name = \"n\"", family: .defaults)
            .expectOneError("'prefix' must be a string literal: the prefix is fixed at compile time", at: value)
    }

    @Test(arguments: nonLiterals)
    func cloudPrefix(value: String) {
        File(classAttribute: "@ObservableCloud(prefix: \(value))", member: "var name = \"n\"", family: .cloud)
            .expectOneError("'prefix' must be a string literal: the prefix is fixed at compile time", at: value)
    }

    /// A bad key is in no generated code: the slot names the property (the compilation fails on the error),
    /// not the expression, which could add a second error, and the accessors are not generated.
    @Test func noExpansionUsesTheExpression() throws {
        let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)
        let decl =
            "final class C {\n    @DefaultsBacked(userDefaultsKey: prefix + \"k\") var a = 1\n    @DefaultsKey(userDefaultsKey: Keys.b) var b = 2\n}"
        let members = try #require(
            ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator
            ).source)
        #expect(members.contains(#"_od_a = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "a", 1))"#))
        #expect(members.contains(#"_od_b = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: "b", 2))"#))
        #expect(!members.contains("Keys.b") && !members.contains("prefix + "))
        let accessors = PropertyExpansion.defaultsBackedAccessors(
            decl: "@DefaultsBacked(userDefaultsKey: k) var a = 1", locator: locator,
            attribute: "@DefaultsBacked(userDefaultsKey: k)")
        #expect(accessors.source == nil && accessors.diagnostics.count == 1)
        // Two literal keys that are equal are warned about; a bad key is not compared (its error is enough).
        let same =
            "final class C {\n    @DefaultsKey(userDefaultsKey: \"b\") var a = 1\n    @DefaultsKey(userDefaultsKey: Keys.b) var b = 2\n}"
        #expect(
            ClassExpansion.members(
                decl: same, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator
            ).diagnostics.isEmpty)
    }

    /// Plain literals in every form are keys, prefixes and suite names, with no diagnostic.
    @Test func plainLiteralsAreAccepted() throws {
        let keys: [(String, String)] = [
            (#""plain""#, "plain"),
            (#""a\u{2E}b\t""#, "a.b\t"),
            (##"#"raw\key"#"##, #"raw\key"#),
            (##"#"raw\#u{41}"#"##, "rawA"),
            ("\"\"\"\n        multi\n          line\n        \"\"\"", "multi\n  line"),
            ("nil", "name")
        ]
        for (value, key) in keys {
            for (classAttribute, member, family) in [
                (
                    "@ObservableDefaults", "@DefaultsBacked(userDefaultsKey: \(value)) var name = \"n\"",
                    MacroFamily.defaults
                ),
                ("@ObservableDefaults", "@DefaultsKey(userDefaultsKey: \(value)) var name = \"n\"", .defaults),
                ("@ObservableCloud", "@CloudBacked(keyValueStoreKey: \(value)) var name = \"n\"", .cloud),
                ("@ObservableCloud", "@CloudKey(keyValueStoreKey: \(value)) var name = \"n\"", .cloud)
            ] {
                let file = File(classAttribute: classAttribute, member: member, family: family)
                #expect(file.allDiagnostics().isEmpty, "\(member)")
                let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)
                let source =
                    ClassExpansion.members(
                        decl: "final class Settings {\n    \(member)\n}", declLocator: locator,
                        attribute: classAttribute, attributeLocator: locator,
                        family: family
                    ).source ?? ""
                #expect(
                    source.contains(
                        "_od_name = _od_Storable.check0(ObservableDefaults::_defaultsSlot(key: \(StringLiteral.quote(key)), \"n\"))"
                    ),
                    "\(member)")
            }
        }
        let raw = File(
            classAttribute: ##"@ObservableDefaults(suiteName: #"s"#, prefix: "p\u{2E}")"##, member: "var name = \"n\"",
            family: .defaults)
        #expect(raw.allDiagnostics().isEmpty)
    }
}
