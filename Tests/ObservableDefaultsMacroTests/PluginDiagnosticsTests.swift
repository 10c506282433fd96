import Foundation
import Testing

/// End to end: each bad fixture in `Fixtures/macros` is type-checked by the real compiler with the built
/// plugin, and the compiler's output must contain the diagnostics listed in its `// expect:` lines.
@Suite struct PluginDiagnosticsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var fixtures: [String] {
        let directory = packageRoot.appendingPathComponent("Fixtures/macros")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".swift") }.sorted()
    }

    /// The build directory holding this test binary, the plugin and the module files.
    static var buildDirectory: URL {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }

    /// Runs `swiftc -typecheck` on `file` with the built plugin; returns the exit status and diagnostics.
    static func typecheck(_ file: URL, extraArguments: [String] = []) throws -> (status: Int32, output: String) {
        let plugin = buildDirectory.appendingPathComponent("ObservableDefaultsMacros-tool").path
        let modules = buildDirectory.appendingPathComponent("Modules").path
        try #require(FileManager.default.fileExists(atPath: plugin), "plugin not built at \(plugin)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "swiftc", "-swift-version", "6", "-typecheck", file.path, "-I", modules,
                "-load-plugin-executable", "\(plugin)#ObservableDefaultsMacros"
            ] + extraArguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// The valid fixtures (`Fixtures/macros-valid`) compile without an error or a warning; those named
    /// `*default-isolation-main-actor*` in a module whose default isolation is the main actor.
    @Test(arguments: [
        "default-isolation-main-actor.swift", "cloud-default-isolation-main-actor.swift", "cloud-classes.swift"
    ])
    func validFixtureCompilesCleanly(fixture: String) throws {
        let file = Self.packageRoot.appendingPathComponent("Fixtures/macros-valid/\(fixture)")
        let isolation = fixture.contains("default-isolation-main-actor") ? ["-default-isolation", "MainActor"] : []
        let (status, output) = try Self.typecheck(file, extraArguments: isolation)
        #expect(status == 0, "\(output)")
        #expect(!output.contains("warning:"), "\(output)")
    }

    @Test(arguments: fixtures)
    func compilerReportsThePluginDiagnostic(fixture: String) throws {
        let file = Self.packageRoot.appendingPathComponent("Fixtures/macros/\(fixture)")
        let expectations = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("// expect: ") }.map { String($0.dropFirst("// expect: ".count)) }
        #expect(!expectations.isEmpty)
        let (status, output) = try Self.typecheck(file)
        #expect(status != 0, "the bad fixture compiled")
        for expectation in expectations {
            #expect(output.contains("\(file.path):\(expectation) (from macro"), "missing: \(expectation)\n\(output)")
        }
        #expect(!output.contains("plugin") || !output.contains("crash"), "plugin failure:\n\(output)")
    }

    /// A property whose type cannot be stored gets one error naming the type (as written in the annotation,
    /// the wrapped type of an Optional, or the type an initializer plainly creates; else the property) and
    /// saying what to do (make it storable, or mark it `@ObservableOnly` or `@Ignore`), not the candidates of
    /// every storage overload; a property marked so compiles, and so does every storable property.
    @Test func aPropertyWhoseTypeCannotBeStoredGetsOneErrorSayingWhatToDo() throws {
        let file = Self.packageRoot.appendingPathComponent("Fixtures/macros-non-storable/non-storable-types.swift")
        let (status, output) = try Self.typecheck(file)
        #expect(status != 0, "the bad fixture compiled")
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let errors = lines.filter { $0.hasPrefix("macro expansion @") && $0.contains(": error: ") }
        let advice =
            "make it Codable, RawRepresentable (with a property-list raw value) or a property-list type, or mark the property @ObservableOnly or @Ignore"
        func suite(_ subject: String) -> String { "\(subject) cannot be stored in a suite: \(advice)" }
        func cloud(_ subject: String) -> String { "\(subject) cannot be stored in a cloud store: \(advice)" }
        let expected = [
            "ObservableDefaults broken": suite("`NotCodable`"),
            "ObservableDefaults brokenOptional": suite("`NotCodable`"),
            "ObservableDefaults annotated": suite("`NotCodable`"),
            "ObservableDefaults list": suite("`[NotCodable]`"),
            "ObservableDefaults spelledOut": suite("`NotCodable`"),
            "ObservableDefaults viaInit": suite("`NotCodable`"),
            "ObservableDefaults viaStatic": suite("`NotCodable`"),
            "ObservableDefaults unknown": suite("the type of 'unknown'"),
            "ObservableCloud broken": cloud("`NotCodable`"),
            "ObservableCloud brokenOptional": cloud("`NotCodable`")
        ]
        #expect(errors.count == expected.count, "one per property that cannot be stored:\n\(output)")
        // Each error is shown under the generated line it is on: the slot `_od_<property>` of its property.
        var found: [String: String] = [:]
        var macro = ""
        for (index, line) in lines.enumerated() {
            if let range = line.range(of: "--- macro expansion @") {
                macro = String(line[range.upperBound...].prefix { $0 != " " })
            }
            guard let range = line.range(of: "`- error: "), index > 0,
                let slot = lines[index - 1].range(of: "private let _od_")
            else { continue }
            let property = lines[index - 1][slot.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            let message = String(line[range.upperBound...])
            let key = "\(macro) \(property)"
            #expect(found[key] == nil, "two errors for \(key)")
            found[key] = message.range(of: "is unavailable: ").map { String(message[$0.upperBound...]) } ?? message
        }
        #expect(found == expected, "\(output)")
        #expect(
            errors.allSatisfy { error in expected.values.contains { error.hasSuffix("is unavailable: \($0)") } },
            "\(output)")
        #expect(!output.contains("no exact matches"), "\(output)")
        #expect(!output.contains("_defaultsSlot(key:_:)"), "\(output)")
        #expect(!output.contains("warning:"), "\(output)")
        #expect(
            !lines.contains { $0.hasPrefix(file.path) && $0.contains(": error: ") }, "\(output)"
        )
    }

    /// A mistake in a macro argument is reported once, by the compiler or by the plugin: the generated code
    /// adds no second error about the same thing. A fixture lists each of its errors in an `// expect:` line
    /// (one mistake each), and the compiler reports exactly those.
    @Test(arguments: [
        "non-string-key.swift", "non-string-backed-key.swift", "non-string-cloud-key.swift",
        "non-string-cloud-key-attribute.swift",
        "non-literal-keys.swift", "non-literal-prefixes.swift"
    ])
    func compilerReportsExactlyOneError(fixture: String) throws {
        let file = Self.packageRoot.appendingPathComponent("Fixtures/macros-one-error/\(fixture)")
        let expectations = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("// expect: ") }.map { String($0.dropFirst("// expect: ".count)) }
        #expect(!expectations.isEmpty)
        let (status, output) = try Self.typecheck(file)
        #expect(status != 0, "the bad fixture compiled")
        let errors = output.split(separator: "\n").filter { $0.contains(": error: ") }
        #expect(errors.count == expectations.count, "\(output)")
        for expectation in expectations {
            #expect(
                errors.filter { $0.hasPrefix("\(file.path):\(expectation)") }.count == 1,
                "missing: \(expectation)\n\(output)")
        }
    }
}
