import Foundation
import Testing

/// The README's Swift examples compile as shown: the daemon's main.swift is type-checked by the real compiler
/// with the built plugin, as a program's main file; the only other Swift block is the manifest fragment.
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

    @Test func daemonExampleCompilesAsShown() throws {
        let blocks = Self.swiftBlocks(try Self.readme)
        let daemon = try #require(blocks.first { $0.contains("@ObservableDefaults") })
        #expect(daemon.hasPrefix("import Foundation\nimport ObservableDefaults\n"))
        let (status, output) = try Self.typecheck(daemon)
        #expect(status == 0, "\(output)")
        #expect(!output.contains("warning:"), "\(output)")
    }

    /// Every other Swift block is the `Package.swift` fragment, which names the library product and package
    /// as the manifest does; nothing else escapes the type check.
    @Test func otherBlocksAreTheManifestFragment() throws {
        let others = Self.swiftBlocks(try Self.readme).filter { !$0.contains("@ObservableDefaults") }
        #expect(others.count == 1)
        for block in others {
            #expect(block.hasPrefix("// Package.swift\n"), "\(block)")
            #expect(block.contains(#".product(name: "ObservableDefaults", package: "ObservableDefaults-Linux")"#))
        }
        let manifest = try String(
            contentsOf: PluginDiagnosticsTests.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#".library(name: "ObservableDefaults", targets: ["ObservableDefaults"])"#))
    }
}
