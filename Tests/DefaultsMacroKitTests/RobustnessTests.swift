import Foundation
import Testing

/// The plugin must never crash: every entry point is fed slices of real, tricky Swift source.
@Suite struct RobustnessTests {
    static let source: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("MacroCompileTests/TrickySyntax.swift")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test func everyEntryPointSurvivesArbitrarySlices() {
        let bytes = Array(Self.source.utf8)
        #expect(bytes.count > 1000)
        var generator = SystemRandomNumberGenerator()
        let locator = SourceLocator(nodeOffset: 0, triviaLength: 0)
        for _ in 0..<400 {
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            let end = min(bytes.count, start + Int.random(in: 0..<600, using: &generator))
            let text = String(decoding: bytes[start..<end], as: UTF8.self)
            _ = ClassExpansion.members(
                decl: text, declLocator: locator, attribute: "@ObservableDefaults(prefix: \"p\")",
                attributeLocator: locator)
            _ = ClassExpansion.memberAttributes(member: text, parent: text, attribute: "@ObservableDefaults")
            _ = ClassExpansion.extensions(decl: text, extendedType: "C", conformances: nil)
            _ = PropertyExpansion.defaultsBackedAccessors(decl: text, locator: locator)
            _ = PropertyExpansion.defaultsBackedPeers(decl: text)
            _ = PropertyExpansion.keyAttributePeers(attribute: text, locator: locator)
            _ = StringLiteral.value(of: text)
            _ = PropertyExpansion.observableOnlyAccessors(decl: text, locator: locator)
            _ = PropertyExpansion.observableOnlyPeers(decl: text)
        }
    }

    @Test func wholeTrickyFileParsesAsClasses() {
        // Every `@ObservableDefaults` class in the compile-test source parses with its members.
        var parser = DeclParser(Self.source)
        _ = parser.parseTypeDecl()
        let start = Self.source.range(of: "@ObservableDefaults(suiteName: \"compile-tests.tricky\"")!.lowerBound
        var classParser = DeclParser(String(Self.source[start...]))
        let type = classParser.parseTypeDecl()
        #expect(type?.name == "TrickySettings")
        let names = type?.members.compactMap { $0.bindings.first?.name } ?? []
        for expected in [
            "braces", "multiLine", "raw", "rawInterpolated", "nestedInterpolation", "afterComment", "closure",
            "multiLineInitializer", "chained", "ternary", "default", "größe", "名前", "restricted", "linuxOnly",
            "otherOS", "neverCompiled", "linuxElse", "mode"
        ] {
            #expect(names.contains(expected), "missing member \(expected)")
        }
    }
}
