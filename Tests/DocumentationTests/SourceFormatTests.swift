import Foundation
import Testing

/// The sources follow the project's layout (`.ci/swift-format.json`, applied by `.ci/format`).
@Suite struct SourceFormatTests {
    @Test func swiftFormatFindsNothingToChange() throws {
        let check = try Run(Script.root.appendingPathComponent(".ci/format").path, ["--check"])
        #expect(check.status == 0, "run .ci/format to lay the sources out as .ci/swift-format.json says: \(check)")
    }
}
