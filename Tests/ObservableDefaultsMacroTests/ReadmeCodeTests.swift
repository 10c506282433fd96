import Foundation
import Testing

/// The README's Swift examples compile as shown: each is type-checked by the real compiler with the built
/// plugin, as a program's main file.
@Suite struct ReadmeCodeTests {
    static var readme: String {
        get throws {
            try String(
                contentsOf: PluginDiagnosticsTests.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        }
    }

    /// The ```swift blocks of the README, in order.
    static func swiftBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func typecheck(_ source: String) throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("main.swift")
        try Data(source.utf8).write(to: file)
        return try PluginDiagnosticsTests.typecheck(file)
    }

    @Test func firstExampleCompilesAsShown() throws {
        let blocks = Self.swiftBlocks(try Self.readme)
        let first = try #require(blocks.first { $0.contains("@ObservableDefaults") })
        #expect(first.hasPrefix("import Foundation\nimport ObservableDefaults\n"))
        let (status, output) = try Self.typecheck(first)
        #expect(status == 0, "\(output)")
        #expect(!output.contains("warning:"), "\(output)")
    }

    @Test func objectUpdateExampleCompilesAsShown() throws {
        let blocks = Self.swiftBlocks(try Self.readme)
        let example = try #require(blocks.first { $0.contains("counters.update(") })
        let (status, output) = try Self.typecheck("import Foundation\nimport ObservableDefaults\n" + example + "\n")
        #expect(status == 0, "\(output)")
        #expect(!output.contains("warning:"), "\(output)")
    }

    @Test func errorChannelExampleCompilesAfterTheFirst() throws {
        let blocks = Self.swiftBlocks(try Self.readme)
        let first = try #require(blocks.first { $0.contains("@ObservableDefaults") })
        let errors = try #require(blocks.first { $0.contains("observeErrors") })
        // The first example ends with an endless loop; the error example would follow the class in a program.
        let program =
            first.components(separatedBy: "\nlet settings = Settings()").first! + "\n" + errors + "\n_ = errors\n"
        let (status, output) = try Self.typecheck(program)
        #expect(status == 0, "\(output)")
    }
}
