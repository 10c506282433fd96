import Foundation

/// The machine-readable form of a run (`--json FILE`): the same data as the Markdown, unrounded.
enum JSONReport {
    static func write(_ report: BenchmarkReport, to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: url, options: .atomic)
    }
}
