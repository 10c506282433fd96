import Foundation
import Testing
import TestSupport

/// The Swift code blocks of the DocC catalog compile as written: each page's blocks are type-checked by the
/// real compiler with the built macro plugin, so the documentation cannot show API that does not exist.
/// Compiled, never run (running them would open suites by name in the user's home).
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ArticleSnippetTests {
    @Test(arguments: Script.pages)
    func swiftBlocksCompile(page: String) throws {
        let file = Script.catalog.appendingPathComponent(page)
        let blocks = SnippetProgram.swiftBlocks(of: try String(contentsOf: file, encoding: .utf8))
        guard !blocks.isEmpty else { return }  // a page without Swift code has nothing to check
        let work = TemporaryDirectory()
        let main = work.url.appendingPathComponent("main.swift")
        try Data(SnippetProgram(article: file, blocks: blocks).source.utf8).write(to: main)
        let result = try Script.typecheck(main)
        #expect(result.status == 0, "\(result)")
    }

    /// The check itself: a block calling API that does not exist fails, and the error names the article's
    /// own file and line.
    @Test func blockWithMissingAPIFailsAtItsArticleLine() throws {
        let article = URL(fileURLWithPath: "/docs/Example.md")
        let text =
            "# Example\n\nIntro.\n\n```swift\nlet suite = try DefaultsSuite(name: \"x\")\nsuite.noSuchMethod()\n```\n"
        let blocks = SnippetProgram.swiftBlocks(of: text)
        #expect(blocks.map(\.firstLine) == [6])
        let work = TemporaryDirectory()
        let main = work.url.appendingPathComponent("main.swift")
        try Data(SnippetProgram(article: article, blocks: blocks).source.utf8).write(to: main)
        let result = try Script.typecheck(main)
        #expect(result.status != 0, "\(result)")
        let errors = result.output.split(separator: "\n").filter { $0.contains(": error: ") }
        #expect(
            errors.count == 1 && errors[0].hasPrefix("/docs/Example.md:7:") && errors[0].contains("noSuchMethod"),
            "\(result)")
    }
}

/// One page's Swift blocks as a program to type-check. A block declaring an `@ObservableDefaults` class
/// stays at top level (a macro cannot extend a local type); every other block becomes the body of its own
/// main-actor function, whose parameters are what blocks use without declaring them: `suite` and
/// `settings`, an object of the getting-started article's `Settings` class (added unless the page declares
/// it). `#sourceLocation` makes diagnostics name the page's file and line.
struct SnippetProgram {
    struct Block {
        /// The 1-based line in the article of the block's first line of code.
        var firstLine: Int
        var code: String
        var declaresClass: Bool {
            code.split(separator: "\n").contains {
                $0.hasPrefix("@ObservableDefaults") || $0.hasPrefix("@ObservableCloud")
            }
        }
    }

    let article: URL
    let blocks: [Block]

    static let settingsClass = """
        @ObservableDefaults(suiteName: "com.example.daemon")
        final class Settings: Sendable {
            var logLevel = "info"
            var workers: Int = 4
            var endpoint: URL? = nil
            @DefaultsKey(userDefaultsKey: "net.port") var port = 8080
            @ObservableOnly var lastReload = Date()
        }
        """

    /// The ```swift blocks of a Markdown text, with where each starts.
    static func swiftBlocks(of text: String) -> [Block] {
        var blocks: [Block] = []
        var current: (firstLine: Int, lines: [Substring])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if current == nil, line == "```swift" {
                current = (index + 2, [])
            } else if let block = current, line == "```" {
                blocks.append(Block(firstLine: block.firstLine, code: block.lines.joined(separator: "\n")))
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return blocks
    }

    var source: String {
        var lines = ["import Foundation", "import ObservableDefaults"]
        func located(_ block: Block) -> [String] {
            ["#sourceLocation(file: \"\(article.path)\", line: \(block.firstLine))", block.code, "#sourceLocation()"]
        }
        for block in blocks where block.declaresClass { lines += located(block) }
        if !blocks.contains(where: { $0.declaresClass && $0.code.contains("class Settings") }) {
            lines.append(Self.settingsClass)
        }
        for (index, block) in blocks.enumerated() where !block.declaresClass {
            lines.append("@MainActor func snippet\(index)(suite: DefaultsSuite, settings: Settings) async throws {")
            lines += located(block)
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
