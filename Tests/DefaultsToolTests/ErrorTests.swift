import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// Every error path: stderr says what and where, the exit status is non-zero, and nothing is written.
@Suite struct ErrorTests {
    @Test func unknownSuite() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        for arguments in [
            ["read", "ghost"], ["read", "ghost", "k"], ["read-type", "ghost", "k"], ["delete", "ghost"],
            ["delete", "ghost", "k"], ["rename", "ghost", "a", "b"], ["export", "ghost", "-"]
        ] {
            let result = try defaults.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("Suite 'ghost' does not exist"), "\(arguments): \(result)")
            #expect(result.stderr.contains(directory.path))
            #expect(result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("ghost.json").path))
        // Reading from a directory that does not exist does not create it.
        let missing = directory.file("not-created")
        let result = try Built.run("defaults", ["read", "ghost", "--directory", missing.path], directory: directory)
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    /// A value the suite's format cannot hold is an error, not a silent no-op.
    @Test func valueTheFormatCannotHold() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "kept", "v", "--format", "plist")
        let result = try defaults.run(["write", "app", "k", "-string", "a\u{1}b"])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderr.contains("key 'k': the string contains U+0001, which an XML property list cannot hold"),
            "\(result)")
        #expect(try directory.contents("app.plist") == ["kept": .string("v")])
    }

    @Test func unknownKey() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "v")
        for arguments in [
            ["read", "app", "nope"], ["read-type", "app", "nope"], ["delete", "app", "nope"],
            ["rename", "app", "nope", "x"]
        ] {
            let result = try defaults.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("Key 'nope' does not exist in suite 'app'"), "\(arguments): \(result)")
            #expect(result.stderr.contains(directory.file("app.json").path))
        }
        #expect(try directory.contents("app.json") == ["k": .string("v")])
    }

    @Test(arguments: [
        ("-int", "12abc"), ("-integer", "99999999999999999999"), ("-float", "fast"), ("-double", "inf"),
        ("-bool", "maybe"), ("-boolean", "2"), ("-date", "yesterday"), ("-date", "2024-13-45"),
        ("-data", "abc"), ("-data", "zz")
    ])
    func malformedValueForATypeFlag(flag: String, value: String) throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "original")
        let before = directory.bytes("app.json")
        for arguments in [
            ["write", "app", "k", flag, value], ["write", "app", "k", "-array", flag, value],
            ["write", "app", "k", "-dict", "inner", flag, value]
        ] {
            let result = try defaults.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("malformed value '\(value)' for"), "\(arguments): \(result)")
            #expect(result.stderr.contains("key 'k' of suite 'app'"), "\(result)")
            #expect(directory.bytes("app.json") == before)
        }
    }

    @Test func arrayAddAndDictAddOnAValueOfAnotherType() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "n", "-int", "1")
        let arrayAdd = try defaults.run(["write", "app", "n", "-array-add", "x"])
        #expect(arrayAdd.status == 1)
        #expect(
            arrayAdd.stderr.contains("it holds a integer, not an array") || arrayAdd.stderr.contains("not an array"))
        let dictAdd = try defaults.run(["write", "app", "n", "-dict-add", "a", "b"])
        #expect(dictAdd.status == 1)
        #expect(dictAdd.stderr.contains("not a dictionary"))
    }

    @Test func brokenFileNamesLineAndColumnAndIsNeverWritten() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let broken = Data("{\n  \"a\": 1,\n  \"b\": \n}\n".utf8)
        try broken.write(to: directory.file("bad.json"))
        let location = directory.file("bad.json").path + ":4:1"
        for arguments in [
            ["read", "bad"], ["read", "bad", "a"], ["read-type", "bad", "a"], ["write", "bad", "c", "v"],
            ["delete", "bad", "a"], ["rename", "bad", "a", "z"], ["export", "bad", "-"],
            ["import", "bad", "-"], ["read"], ["find", "a"]
        ] {
            let result = try defaults.run(arguments, stdin: Data("{}".utf8))
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains(location), "\(arguments): \(result)")
            #expect(directory.bytes("bad.json") == broken, "\(arguments) changed the broken file")
        }
        let plist = Data(
            "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict><key>a</key><integer>x</integer></dict>\n</plist>\n"
                .utf8)
        try plist.write(to: directory.file("badlist.plist"))
        let result = try defaults.run(["read", "badlist"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(directory.file("badlist.plist").path + ":"), "\(result)")
    }

    @Test func aDirectoryWhereTheFileShouldBe() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try FileManager.default.createDirectory(at: directory.file("odd.json"), withIntermediateDirectories: true)
        for arguments in [["read", "odd"], ["write", "odd", "k", "v"]] {
            let result = try defaults.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains(directory.file("odd.json").path), "\(result)")
            #expect(result.stderr.contains("directory"), "\(result)")
        }
    }

    @Test func badSuiteNames() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        // A name with a `/` is a path (MacOSHabitsTests); these are neither names nor paths.
        for name in ["..", ".", ""] {
            for arguments in [
                ["write", name, "k", "v"], ["read", name], ["path", name], ["watch", name], ["import", name, "-"]
            ] {
                let result = try defaults.run(arguments, stdin: Data("{}".utf8))
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(result.stderr.contains("invalid suite name"), "\(arguments): \(result)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(
            !FileManager.default.fileExists(
                atPath: directory.url.deletingLastPathComponent().appendingPathComponent("escape.json").path))
    }

    @Test func usageErrorsExitWithStatusTwo() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let cases: [([String], String)] = [
            ([], "missing verb"),
            (["frobnicate"], "unknown verb 'frobnicate'"),
            (["read", "a", "b", "c"], "unexpected argument 'c'"),
            (["read-type", "a"], "missing arguments"),
            (["write", "app", "k"], "missing arguments"),
            (["write", "app", "k", "-int"], "missing value after -int"),
            (["write", "app", "k", "-colour", "red"], "unknown type flag '-colour'"),
            (["write", "app", "k", "a", "b"], "unexpected argument 'b'"),
            (["write", "app", "k", "-dict", "a"], "key 'a' has no value"),
            (["write", "app", "k", "-array", "-array", "x"], "cannot be nested"),
            (["read", "--colour"], "unknown option '--colour'"),
            (["read", "--format", "yaml"], "unknown format 'yaml'"),
            (["watch"], "missing suite"),
            (["read", "--prefix", "x"], "unknown option '--prefix'")
        ]
        for (arguments, message) in cases {
            let result = try defaults.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains(message), "\(arguments): \(result)")
            #expect(result.stderr.contains("--help"), "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("app.json").path))
    }

    @Test func exportToAnUnwritablePlace() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "v")
        let result = try defaults.run(["export", "app", directory.file("no/such/dir/out.json").path])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("cannot export to \(directory.file("no/such/dir/out.json").path): its directory"),
            "\(result)")
        let missing = try defaults.run(["import", "app", directory.file("absent.json").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot read"))
    }
}
