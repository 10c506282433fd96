import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// The `defaults` tool on a file a person wrote (issue 32): its writes change only the members they
/// change, another process's write between two of ours keeps the layout, and what it prints is strict JSON.
@Suite struct HandFormattedToolTests {
    static let handWritten = """
        // The daemon's settings.
        {
            "workers": 4, // one per core
            /* logging */
            "level": "info",
            "limits": {"cpu": 2, "memory": "1G",},
        }

        """

    private func text(_ directory: TemporaryDirectory, _ name: String) -> String {
        String(decoding: directory.bytes(name), as: UTF8.self)
    }

    /// The same for an XML property list a person wrote: comments, four spaces and the key order stay; a
    /// new key goes after the last member (the keys are not sorted), a deleted one goes with its lines.
    @Test func writeAndDeleteKeepAHandWrittenPropertyList() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let original = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- The daemon's settings. -->
            <plist version="1.0">
            <dict>
                <key>workers</key> <integer>4</integer> <!-- one per core -->
                <!-- logging -->
                <key>level</key>
                <string>info</string>
            </dict>
            </plist>

            """
        try Data(original.utf8).write(to: directory.file("app.plist"))
        try defaults.ok("write", "app", "workers", "-int", "8")
        try defaults.ok("write", "app", "theme", "dark")
        #expect(
            text(directory, "app.plist")
                == original.replacingOccurrences(of: "<integer>4</integer>", with: "<integer>8</integer>")
                .replacingOccurrences(
                    of: "<string>info</string>\n",
                    with: "<string>info</string>\n    <key>theme</key>\n    <string>dark</string>\n"))
        try defaults.ok("delete", "app", "level")
        #expect(
            text(directory, "app.plist") == """
                <?xml version="1.0" encoding="UTF-8"?>
                <!-- The daemon's settings. -->
                <plist version="1.0">
                <dict>
                    <key>workers</key> <integer>8</integer> <!-- one per core -->
                    <!-- logging -->
                    <key>theme</key>
                    <string>dark</string>
                </dict>
                </plist>

                """)
    }

    @Test func writeAndDeleteChangeOnlyTheirMembers() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try Data(Self.handWritten.utf8).write(to: directory.file("app.json"))
        try defaults.ok("write", "app", "workers", "-int", "8")
        try defaults.ok("write", "app", "theme", "dark")
        #expect(
            text(directory, "app.json") == """
                // The daemon's settings.
                {
                    "workers": 8, // one per core
                    /* logging */
                    "level": "info",
                    "limits": {"cpu": 2, "memory": "1G",},
                    "theme": "dark",
                }

                """)
        try defaults.ok("delete", "app", "level")
        #expect(
            text(directory, "app.json") == """
                // The daemon's settings.
                {
                    "workers": 8, // one per core
                    /* logging */
                    "limits": {"cpu": 2, "memory": "1G",},
                    "theme": "dark",
                }

                """)
    }

    /// This process writes, the tool (another process) writes, this process writes again: the second
    /// write of ours catches up with the tool's version and still edits the person's layout.
    @Test func anotherProcessesWriteBetweenTwoOfOursKeepsTheLayout() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let file = directory.file("shared.json")
        try Data(Self.handWritten.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        suite.set(6, forKey: "workers")
        try defaults.ok("write", "shared", "level", "debug")
        suite.set(true, forKey: "verbose")
        #expect(
            text(directory, "shared.json") == """
                // The daemon's settings.
                {
                    "workers": 6, // one per core
                    /* logging */
                    "level": "debug",
                    "limits": {"cpu": 2, "memory": "1G",},
                    "verbose": true,
                }

                """)
        #expect(suite.string(forKey: "level") == "debug")
    }

    /// `export` and `read --json` re-encode the values: no comments, no trailing commas.
    @Test func exportAndReadJSONPrintStrictJSON() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try Data(Self.handWritten.utf8).write(to: directory.file("app.json"))
        let exported = try defaults.ok("export", "app", "-", "--format", "json")
        #expect(
            exported == """
                {
                  "level": "info",
                  "limits": {
                    "cpu": 2,
                    "memory": "1G"
                  },
                  "workers": 4
                }

                """)
        let read = try defaults.ok("read", "app", "--json")
        #expect(!read.contains("//") && !read.contains("/*") && !read.contains(",\n}") && !read.contains(",}"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(read.utf8)) as? [String: Any])
        #expect(parsed.keys.sorted() == ["level", "limits", "workers"])
        let limits = try defaults.ok("read", "app", "limits", "--json")
        #expect(!limits.contains(",}") && !limits.contains(",\n}"), "\(limits)")
    }
}
