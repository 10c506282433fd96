import Foundation
import Testing

/// Compares `actual` with `Snapshots/<name>.txt` beside this file. Set `RECORD_SNAPSHOTS=1` to (re)write
/// the files; review the diff before committing.
func assertSnapshot(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let file = directory.appendingPathComponent(name + ".txt")
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? actual.write(to: file, atomically: true, encoding: .utf8)
        return
    }
    guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
        Issue.record("missing snapshot \(name).txt (run with RECORD_SNAPSHOTS=1)", sourceLocation: sourceLocation)
        return
    }
    #expect(actual == expected, "snapshot \(name) differs", sourceLocation: sourceLocation)
}
