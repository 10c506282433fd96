import Testing

/// The error a property gets when its type cannot be stored names the type when the declaration shows it, and
/// the checks are shared by properties with the same message.
@Suite struct StorableCheckTests {
    func property(_ decl: String) throws -> PropertyExpansion.Property {
        var parser = DeclParser(decl)
        let member = parser.parseMember()
        return try #require(member.flatMap(PropertyExpansion.property))
    }

    func typeName(_ decl: String) throws -> String? { StorableCheck.typeName(try property(decl)) }

    @Test func theTypeAsWrittenInTheAnnotation() throws {
        #expect(try typeName("var x: NotCodable = .standard") == "NotCodable")
        #expect(try typeName("var x: [NotCodable] = []") == "[NotCodable]")
        #expect(try typeName("var x: [String:   NotCodable] = [:]") == "[String: NotCodable]")
        #expect(try typeName("var x: Module.Box<NotCodable> = .init()") == "Module.Box<NotCodable>")
        #expect(try typeName("var x: [String /* keys */: Int] = [:]") == "[String : Int]")
    }

    @Test func anOptionalNamesItsWrappedType() throws {
        #expect(try typeName("var x: NotCodable? = nil") == "NotCodable")
        #expect(try typeName("var x: NotCodable?") == "NotCodable")
        #expect(try typeName("var x: NotCodable! = nil") == "NotCodable")
        #expect(try typeName("var x: Optional<NotCodable> = nil") == "NotCodable")
        #expect(try typeName("var x: Swift.Optional<[NotCodable]> = nil") == "[NotCodable]")
        #expect(try typeName("var x: [NotCodable?] = []") == "[NotCodable?]")
    }

    @Test func theTypeAnInitializerPlainlyCreates() throws {
        #expect(try typeName("var x = NotCodable()") == "NotCodable")
        #expect(try typeName("var x = NotCodable(a: 1, b: [2])") == "NotCodable")
        #expect(try typeName("var x = Module.NotCodable()") == "Module.NotCodable")
        #expect(try typeName("var x = Box<Int>()") == "Box<Int>")
        #expect(try typeName("var x = NotCodable.init(x: 2)") == "NotCodable")
        #expect(try typeName("var x = NotCodable.standard") == "NotCodable")
        #expect(try typeName("var x = 1") == "Int")
        #expect(try typeName("var x = -2.5") == "Double")
        #expect(try typeName(#"var x = "s""#) == "String")
        #expect(try typeName("var x = true") == "Bool")
    }

    @Test func otherwiseThePropertyIsNamed() throws {
        for decl in [
            "var x = NotCodable.make()", "var x = NotCodable.standard.copy", "var x = [NotCodable()]",
            "var x = make()", "var x = Self.standard", "var x = NotCodable.Nested", "var x = NotCodable() + other",
            "var x = NotCodable { 1 }", "var x = value"
        ] {
            #expect(try typeName(decl) == nil, "\(decl)")
        }
        #expect(
            StorableCheck.message(try property("var x = make()"), family: .defaults)
                == "the type of 'x' cannot be stored in a suite: make it Codable, RawRepresentable (with a property-list raw value) or a property-list type, or mark the property @ObservableOnly or @Ignore"
        )
        #expect(
            StorableCheck.message(try property("var x: NotCodable? = nil"), family: .cloud)
                == "`NotCodable` cannot be stored in a cloud store: make it Codable, RawRepresentable (with a property-list raw value) or a property-list type, or mark the property @ObservableOnly or @Ignore"
        )
    }

    @Test func propertiesWithTheSameMessageShareACheck() throws {
        let decl = """
            final class Settings {
                var a = 1
                var b: Int = 2
                var c: Int? = nil
                var d = "s"
                var e = make()
                var f = make()
                #if os(Linux)
                var g = 3
                #endif
            }
            """
        let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)
        let source = try #require(
            ClassExpansion.members(
                decl: decl, declLocator: locator, attribute: "@ObservableDefaults", attributeLocator: locator
            ).source)
        let checks = ["a": "check0", "b": "check0", "c": "check0", "d": "check1", "e": "check2", "f": "check3"]
        let lines = source.split(separator: "\n")
        for (name, check) in checks {
            let slot = lines.first {
                $0.hasPrefix("private let _od_\(name) ") || $0.hasPrefix("private let _od_\(name):")
            }
            #expect(slot?.contains(" = _od_Storable.\(check)(ObservableDefaults::") == true, "\(name)")
        }
        #expect(source.contains("#if os(Linux)\nprivate let _od_g = _od_Storable.check4("))
        #expect(source.contains("#if os(Linux)\n    nonisolated static func check4<"))
        #expect(source.components(separatedBy: "@available(*, unavailable").count == 6)
        #expect(source.contains("message: \"the type of 'e' cannot be stored in a suite:"))
        #expect(source.contains("message: \"the type of 'f' cannot be stored in a suite:"))
        #expect(!source.contains("check5"))
    }
}
