import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A write by the library changes only the members it changes in a file a person wrote (issue 32): every
/// kind of write, on files laid out by hand, compared byte for byte with the text expected.
@Suite struct HandFormattedWriteTests {
    let directory = TemporaryDirectory()

    /// A suite on a new file holding `text`.
    private func suite(_ name: String, _ text: String) throws -> DefaultsSuite {
        let file = directory.file("\(name).json")
        try Data(text.utf8).write(to: file)
        return try DefaultsSuite(fileURL: file)
    }

    private func text(_ suite: DefaultsSuite) throws -> String {
        String(decoding: try Data(contentsOf: suite.fileURL), as: UTF8.self)
    }

    /// In a sorted file, a new key goes above the comment lines right above the member after it (they
    /// describe that member), and below a comment with a blank line between it and that member.
    @Test func aNewKeyGoesAboveTheCommentsOfTheNextMember() throws {
        let original = """
            {
              "alpha": 1, // the first
              // About gamma,
              /* on two lines. */
              "gamma": 3,
              // Limits.

              "kappa": 5,
              "omega": 9
            }

            """
        let suite = try suite("comment-block", original)
        suite.set(2, forKey: "beta")
        var expected = original.replacingOccurrences(
            of: "  // About gamma,", with: "  \"beta\": 2,\n  // About gamma,")
        #expect(try text(suite) == expected)

        suite.set(4, forKey: "hotel")
        expected = expected.replacingOccurrences(of: "\n  \"kappa\"", with: "\n  \"hotel\": 4,\n  \"kappa\"")
        #expect(try text(suite) == expected)
        #expect(expected.contains("  // Limits.\n\n  \"hotel\": 4,\n  \"kappa\": 5,"))
        #expect(suite.integer(forKey: "hotel") == 4 && suite.integer(forKey: "beta") == 2)
    }

    /// Tabs, comments everywhere a comment may stand, unicode escapes and trailing commas: `set` of an
    /// existing key changes its value only, a new key goes after the last member (the keys are not in
    /// sorted order) in the file's style, `removeObject` takes the member's line.
    @Test func setAndRemoveKeepATabbedCommentedFile() throws {
        let original = #"""
            // Settings for the daemon.
            /* Edited by hand. */
            {
            \#t// The level: "debug", "info" or "error".
            \#t"logLevel": /* was "info" */ "debug",
            \#t"workers": 4, // one per core
            \#t"caf\u00e9": "cr\u00e8me",
            \#t"tags": [
            \#t\#t"a", // first
            \#t\#t/* second */ "b",
            \#t],
            \#t"ratio": 5.0,
            }
            // end

            """#
        let suite = try suite("tabbed", original)
        #expect(suite.string(forKey: "café") == "crème")
        #expect(suite.double(forKey: "ratio") == 5)

        suite.set(8, forKey: "workers")
        var expected = original.replacingOccurrences(of: #""workers": 4,"#, with: #""workers": 8,"#)
        #expect(try text(suite) == expected)

        suite.set("x", forKey: "new")
        expected = expected.replacingOccurrences(
            of: "\t\"ratio\": 5.0,\n", with: "\t\"ratio\": 5.0,\n\t\"new\": \"x\",\n")
        #expect(try text(suite) == expected)

        suite.removeObject(forKey: "café")
        expected = expected.replacingOccurrences(of: "\t\"caf\\u00e9\": \"cr\\u00e8me\",\n", with: "")
        #expect(try text(suite) == expected)

        suite.set("dark", forKey: "logLevel")
        suite.set(["x", "y"], forKey: "tags")
        #expect(
            try text(suite) == #"""
                // Settings for the daemon.
                /* Edited by hand. */
                {
                \#t// The level: "debug", "info" or "error".
                \#t"logLevel": /* was "info" */ "dark",
                \#t"workers": 8, // one per core
                \#t"tags": [
                \#t\#t"x",
                \#t\#t"y"
                \#t],
                \#t"ratio": 5.0,
                \#t"new": "x",
                }
                // end

                """#)
        let reread = try SuiteFormat.json.decode(try Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)
        #expect(reread == suite.storage.storedValues)
    }

    /// Four spaces, CRLF line breaks and a byte-order mark; keys in sorted order: a new key goes to its
    /// sorted place, a nested value is laid out with the file's indentation and line breaks, and removing
    /// the last member removes the comma before it.
    @Test func sortedFileWithCRLFAndByteOrderMark() throws {
        let original = "\u{FEFF}{\r\n    \"b\": 1,\r\n    \"d\": [\r\n        1\r\n    ]\r\n}\r\n"
        let suite = try suite("crlf", original)
        suite.set(true, forKey: "c")
        #expect(
            try text(suite)
                == "\u{FEFF}{\r\n    \"b\": 1,\r\n    \"c\": true,\r\n    \"d\": [\r\n        1\r\n    ]\r\n}\r\n")
        suite.set(DefaultsValue.dictionary(["x": .integer(1)]), forKey: "e")
        #expect(
            try text(suite)
                == "\u{FEFF}{\r\n    \"b\": 1,\r\n    \"c\": true,\r\n    \"d\": [\r\n        1\r\n    ],\r\n"
                + "    \"e\": {\r\n        \"x\": 1\r\n    }\r\n}\r\n")
        suite.set(0, forKey: "a")
        suite.removeObject(forKey: "e")
        #expect(
            try text(suite)
                == "\u{FEFF}{\r\n    \"a\": 0,\r\n    \"b\": 1,\r\n    \"c\": true,\r\n    \"d\": [\r\n        1\r\n    ]\r\n}\r\n"
        )
    }

    /// A one-line object stays on one line, with its own spacing (`"key":value`, `, ` between members).
    @Test func oneLineObjectStaysOnOneLine() throws {
        let suite = try suite("oneline", #"{"zeta":1, "alpha":"x"}"#)
        suite.set(2, forKey: "beta")
        #expect(try text(suite) == #"{"zeta":1, "alpha":"x", "beta":2}"#)
        suite.set([1, 2], forKey: "zeta")
        #expect(try text(suite) == #"{"zeta":[1, 2], "alpha":"x", "beta":2}"#)
        suite.removeObject(forKey: "alpha")
        #expect(try text(suite) == #"{"zeta":[1, 2], "beta":2}"#)
        suite.removeObject(forKey: "beta")
        #expect(try text(suite) == #"{"zeta":[1, 2]}"#)
        suite.removeObject(forKey: "zeta")
        #expect(try text(suite) == "{}")
    }

    /// `performBatchUpdates` and `update(forKey:)`: with a key written twice the last member (the one
    /// read) is changed, and removing the key removes every member with it.
    @Test func batchAndUpdateWithDuplicateKeys() throws {
        let suite = try suite(
            "duplicates",
            """
            {
              "a": 1,
              "a": 2, // the one read
              "b": 3
            }

            """)
        #expect(suite.integer(forKey: "a") == 2)
        try suite.update(forKey: "a") { value in
            if case .integer(let number)? = value { return .integer(number + 1) }
            return value
        }
        #expect(
            try text(suite) == """
                {
                  "a": 1,
                  "a": 3, // the one read
                  "b": 3
                }

                """)
        suite.performBatchUpdates {
            suite.set(4, forKey: "b")
            suite.set(5, forKey: "c")
            suite.removeObject(forKey: "a")
        }
        #expect(
            try text(suite) == """
                {
                  "b": 4,
                  "c": 5
                }

                """)
    }

    /// The value after a comment after the colon is replaced, the comment stays; a number spelled `1e3`
    /// keeps its text while another key changes; a trailing line comment stays on the line of the member
    /// it follows when a member is appended after it.
    @Test func commentsAroundValuesStay() throws {
        let suite = try suite(
            "around",
            """
            {
                "name": "n", // who
                "limit": /* MB */ 1e3 // megabytes
            }
            """)
        suite.set("m", forKey: "name")
        suite.set(true, forKey: "added")
        #expect(
            try text(suite) == """
                {
                    "name": "m", // who
                    "limit": /* MB */ 1e3, // megabytes
                    "added": true
                }
                """)
        suite.set(2000, forKey: "limit")
        #expect(
            try text(suite) == """
                {
                    "name": "m", // who
                    "limit": /* MB */ 2000, // megabytes
                    "added": true
                }
                """)
    }

    /// An object with only a comment gets its first member after the comment; a file with nothing but a
    /// comment keeps it above the object written after it.
    @Test func emptyObjectsAndCommentOnlyFiles() throws {
        let commented = try suite("commented", "{\n  // keys go here\n}\n")
        commented.set(1, forKey: "a")
        #expect(try text(commented) == "{\n  // keys go here\n  \"a\": 1\n}\n")

        // No member to copy the indentation from: the comments' is the file's own.
        let tabbed = try suite("tabbed", "{\n\t// keys go here\n\t/* one per line */\n}\n")
        tabbed.set(1, forKey: "a")
        #expect(try text(tabbed) == "{\n\t// keys go here\n\t/* one per line */\n\t\"a\": 1\n}\n")
        let fourSpaces = try suite("four", "{ // settings\n    // go here\n}\n")
        fourSpaces.set(["x": 1], forKey: "d")
        #expect(try text(fourSpaces) == "{ // settings\n    // go here\n    \"d\": {\n        \"x\": 1\n    }\n}\n")

        let bare = try suite("bare", "// nothing yet\n")
        bare.set(1, forKey: "a")
        #expect(try text(bare) == "// nothing yet\n{\n  \"a\": 1\n}\n")
        bare.removeObject(forKey: "a")
        #expect(try text(bare) == "// nothing yet\n{}\n")
    }

    /// Files the library writes keep today's layout: sorted keys, two spaces, `{}` when empty.
    @Test func libraryLayoutIsUnchanged() throws {
        let suite = try DefaultsSuite(name: "library-layout-surgical", directory: directory.url)
        suite.set(2, forKey: "b")
        suite.set(1, forKey: "a")
        suite.set(DefaultsValue.array([.integer(1)]), forKey: "c")
        #expect(try text(suite) == "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": [\n    1\n  ]\n}\n")
        for key in ["a", "b", "c"] { suite.removeObject(forKey: key) }
        #expect(try text(suite) == "{}\n")
    }

    // MARK: Reading

    /// Comments and trailing commas read as VS Code reads them; a re-read of a commented file that changed
    /// one member finds exactly that member changed.
    @Test func commentsAndTrailingCommasRead() throws {
        let text = """
            // top
            { /* a */ "a": [1, /* two */ 2, [3,],], // end of a
              "b": {"c": "// not a comment", "d": "/* nor this */",},
            } // bottom
            """
        let values = try SuiteFormat.json.decode(Data(text.utf8), fileURL: directory.file("c.json"))
        #expect(
            values == [
                "a": .array([.integer(1), .integer(2), .array([.integer(3)])]),
                "b": .dictionary(["c": .string("// not a comment"), "d": .string("/* nor this */")])
            ])
        let suite = try suite("reread", text)
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }
        let edited = text.replacingOccurrences(of: "/* two */ 2", with: "/* two */ 22")
        try HandEdit.renameOver(suite.fileURL, edited)
        #expect(eventually { suite.storedValue(forKey: "a") != values["a"] })
        // A marker edited after it proves nothing else was heard.
        try HandEdit.renameOver(
            suite.fileURL, edited.replacingOccurrences(of: "\"b\": {", with: "\"marker\": 1, \"b\": {"))
        #expect(recorder.waitFor(key: "marker"))
        #expect(recorder.changes(before: "marker").map(\.keys) == [["a"]])
        #expect(suite.storedValue(forKey: "a") == .array([.integer(1), .integer(22), .array([.integer(3)])]))
    }

    /// Documents other than suite files (etcd answers, cloud values) stay strict JSON.
    @Test func otherDocumentsStayStrict() throws {
        #expect(throws: DefaultsError.self) { try JSONReader.parseDocument(Data("[1, 2,]".utf8)) }
        #expect(throws: DefaultsError.self) { try JSONReader.parseDocument(Data("// x\n1".utf8)) }
        #expect(try JSONReader.parseDocument(Data("[1, 2]".utf8)) == .array([.integer(1), .integer(2)]))
    }
}
