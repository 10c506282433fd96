@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

/// A daemon's settings object on a file a person wrote (issue 32).
@ObservableDefaults
final class HandFormattedSettings: Sendable {
    var workers = 1
    var level = "info"
    var limits: [String: Int] = [:]
}

@Suite struct HandFormattedPropertyTests {
    /// A property write changes its member in place: the comments, tabs, the unknown key, `5.0` and the
    /// trailing comma stay; a property whose key is not in the file yet is appended in the file's style.
    @Test func propertyWritesEditTheirMembersOnly() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("hand-formatted-property.json")
        let original = """
            {
            \t// how many worker threads
            \t"workers": 2,
            \t"unknown": 5.0, /* kept */
            \t"level": "debug",
            }

            """
        try Data(original.utf8).write(to: file)
        let settings = HandFormattedSettings(userDefaults: try DefaultsSuite(fileURL: file))
        #expect(settings.workers == 2)
        settings.workers = 3
        settings.limits = ["cpu": 2]
        #expect(
            String(decoding: try Data(contentsOf: file), as: UTF8.self) == """
                {
                \t// how many worker threads
                \t"workers": 3,
                \t"unknown": 5.0, /* kept */
                \t"level": "debug",
                \t"limits": {
                \t\t"cpu": 2
                \t},
                }

                """)
    }
}
