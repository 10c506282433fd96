import Foundation
import Testing
import TestSupport

/// The library's DocC catalog, built by `.ci/build-docs` as part of `swift test` (which is what CI runs):
/// a renamed symbol, a broken link or an undocumented public declaration fails here, with DocC's or the
/// doc-comment check's diagnostics in the failure message.
///
/// Serialized: each build runs DocC, and the machine's cores are shared with the rest of the suite.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct DocumentationTests {
    @Test func catalogBuildsWithoutWarnings() throws {
        let output = TemporaryDirectory()
        // The snippet tests check every page found; these must be among them.
        #expect(Set(Script.articles.map { "\($0).md" } + ["ObservableDefaults.md"]).isSubset(of: Script.pages))
        let result = try Script.buildDocs("--output", output.url.path)
        try #require(result.status == 0, "\(result)")
        // The archive holds the landing page, every article and the pages of the symbols.
        let pages = output.url.appendingPathComponent("ObservableDefaults.doccarchive/data/documentation")
        let expected =
            [
                "observabledefaults.json", "observabledefaults/defaultssuite.json",
                "observabledefaults/defaultssuite/observe(keys:prefix:scope:_:).json"
            ] + Script.articles.map { "observabledefaults/\($0.lowercased()).json" }
        for page in expected {
            #expect(FileManager.default.fileExists(atPath: pages.appendingPathComponent(page).path), "missing \(page)")
        }
    }

    @Test func brokenSymbolLinkFailsTheBuild() throws {
        let work = TemporaryDirectory()
        let catalog = work.url.appendingPathComponent("Documentation.docc")
        try FileManager.default.copyItem(at: Script.catalog, to: catalog)
        let article = catalog.appendingPathComponent("GettingStarted.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        try (text + "\nSee ``DefaultsSuite/noSuchMember(forKey:)``.\n").write(
            to: article, atomically: true, encoding: .utf8)

        let result = try Script.buildDocs(
            "--catalog", catalog.path, "--output", work.url.appendingPathComponent("out").path)
        #expect(result.status != 0, "\(result)")
        #expect(result.output.contains("noSuchMember(forKey:)"), "\(result)")
        #expect(result.output.contains("GettingStarted.md"), "\(result)")
    }

    @Test func undocumentedPublicDeclarationsFailTheCheck() throws {
        let graphs = TemporaryDirectory()
        func symbol(_ path: String, line: Int?, comment: [String]?, from module: String = "Example") -> [String: Any] {
            var symbol: [String: Any] = ["pathComponents": path.split(separator: ".").map(String.init)]
            if let line {
                symbol["location"] = ["uri": "file:///src/Example.swift", "position": ["line": line, "character": 4]]
            }
            if let comment { symbol["docComment"] = ["module": module, "lines": comment.map { ["text": $0] }] }
            return symbol
        }
        let graph: [String: Any] = [
            "module": ["name": "Example"],
            "symbols": [
                symbol("Suite.documented", line: 1, comment: ["Reads a value."]),
                symbol("Suite.undocumented", line: 3, comment: nil),
                symbol("Suite.blank", line: 5, comment: ["   ", ""]),
                // A witness without a comment shows the protocol's text, which is not a doc comment of ours.
                symbol("Suite.hash(into:)", line: 7, comment: ["Hashes the essential components."], from: "Swift"),
                // Synthesized by the compiler: no declaration, nothing to comment.
                symbol("Kind.init(rawValue:)", line: nil, comment: ["Creates a new instance."], from: "Swift")
            ]
        ]
        try JSONSerialization.data(withJSONObject: graph).write(
            to: graphs.url.appendingPathComponent("Example.symbols.json"))

        let result = try Script.checkDocComments(graphs.url)
        #expect(result.status == 1, "\(result)")
        let errors = result.output.split(separator: "\n").filter { $0.contains("error:") }.map(String.init)
        #expect(
            errors
                == [
                    "/src/Example.swift:4: error: public symbol 'Suite.undocumented' has no doc comment",
                    "/src/Example.swift:6: error: public symbol 'Suite.blank' has no doc comment",
                    "/src/Example.swift:8: error: public symbol 'Suite.hash(into:)' has no doc comment"
                ].sorted(), "\(result)")
    }

    @Test func documentedDeclarationsPassTheCheck() throws {
        let graphs = TemporaryDirectory()
        let graph: [String: Any] = [
            "module": ["name": "Example"],
            "symbols": [
                [
                    "pathComponents": ["Suite"],
                    "location": ["uri": "file:///src/Example.swift", "position": ["line": 0, "character": 0]],
                    "docComment": ["module": "Example", "lines": [["text": "A suite."]]]
                ]
            ]
        ]
        try JSONSerialization.data(withJSONObject: graph).write(
            to: graphs.url.appendingPathComponent("Example.symbols.json"))
        let result = try Script.checkDocComments(graphs.url)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("all 1 public declarations are documented"), "\(result)")
    }
}

/// The scripts in `.ci/`, run with the modules of the build that is running the tests.
enum Script {
    /// Tests/DocumentationTests/DocumentationTests.swift -> the package root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let catalog = root.appendingPathComponent("Sources/ObservableDefaults/Documentation.docc")
    /// Every Markdown page of the catalog: the landing page, extension pages and articles.
    static var pages: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: catalog.path)) ?? []
        return names.filter { $0.hasSuffix(".md") }.sorted()
    }
    /// The articles the landing page links, by file name.
    static let articles = [
        "GettingStarted", "SuitesAndFiles", "Layers", "ObservingChanges", "Modes", "EditingByHand", "TheDefaultsTool",
        "Durability", "HandlingErrors", "ComingFromTheAppleLibrary", "SyncingAcrossMachines", "TheTwoHalves",
        "Architecture"
    ]
    /// The build's products directory: where the running test bundle is. `swift test` built the library's
    /// module there, and holds the build lock a `swift build` of the script's own would wait for.
    static var binPath: URL { BuiltProduct.directory }

    static func buildDocs(_ arguments: String...) throws -> Run {
        try Run(root.appendingPathComponent(".ci/build-docs").path, ["--bin-path", binPath.path] + arguments)
    }

    /// Runs `swiftc -typecheck` on `file` against the built library and macro plugin.
    static func typecheck(_ file: URL) throws -> Run {
        let plugin = binPath.appendingPathComponent("ObservableDefaultsMacros-tool").path
        try #require(FileManager.default.isExecutableFile(atPath: plugin), "the macro plugin is not built at \(plugin)")
        return try Run(
            "/usr/bin/env",
            [
                "swiftc", "-swift-version", "6", "-typecheck", file.path,
                "-I", binPath.appendingPathComponent("Modules").path,
                "-module-cache-path", binPath.appendingPathComponent("ModuleCache").path,
                "-load-plugin-executable", "\(plugin)#ObservableDefaultsMacros"
            ])
    }

    static func checkDocComments(_ directory: URL) throws -> Run {
        let script = root.appendingPathComponent(".ci/check-doc-comments.swift").path
        let moduleCache = binPath.appendingPathComponent("ModuleCache").path
        return try Run("/usr/bin/env", ["swift", "-module-cache-path", moduleCache, script, directory.path])
    }
}

/// A finished child process: its exit status and its standard output and error, interleaved.
struct Run: CustomStringConvertible {
    let status: Int32
    let output: String

    init(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        output = String(decoding: data, as: UTF8.self)
    }

    var description: String { "exit status \(status); output:\n\(output)" }
}
