import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// What people bring from macOS `defaults` (issue 9, items 2 to 6): property-list values without a type
/// flag, option-looking arguments, paths as domains, and macOS-style output.
@Suite struct MacOSHabitsTests {
    @Test func bareValuesAreParsedAsPropertyListText() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "dict", #"{ a = 1; b = (x, "y z"); "c d" = { e = f; }; }"#)
        try defaults.ok("write", "app", "list", "( 1, 2 )")
        try defaults.ok("write", "app", "empty", "()")
        try defaults.ok("write", "app", "bytes", "<0a ff>")
        try defaults.ok("write", "app", "count", "<integer>5</integer>")
        try defaults.ok("write", "app", "ratio", "<real>2</real>")
        try defaults.ok("write", "app", "on", "<true/>")
        try defaults.ok(
            "write", "app", "xmlDict", "<dict><key>k</key><array><string>v</string><integer>1</integer></array></dict>")
        try defaults.ok("write", "app", "plain", "hello world")
        try defaults.ok("write", "app", "number", "5")
        try defaults.ok("write", "app", "literal", "-string", "{ a = 1; }")
        let contents = try directory.contents("app.json")
        // As on macOS, the leaves of old-style text are strings.
        #expect(
            contents["dict"]
                == .dictionary([
                    "a": .string("1"), "b": .array([.string("x"), .string("y z")]),
                    "c d": .dictionary(["e": .string("f")])
                ]))
        #expect(contents["list"] == .array([.string("1"), .string("2")]))
        #expect(contents["empty"] == .array([]))
        #expect(contents["bytes"] == .string(Data([0x0a, 0xff]).base64EncodedString()))
        #expect(contents["count"] == .integer(5))
        #expect(contents["ratio"] == .double(2))
        #expect(contents["on"] == .bool(true))
        #expect(contents["xmlDict"] == .dictionary(["k": .array([.string("v"), .integer(1)])]))
        #expect(contents["plain"] == .string("hello world"))
        #expect(contents["number"] == .string("5"))
        #expect(contents["literal"] == .string("{ a = 1; }"))
    }

    @Test func malformedPropertyListTextIsAnErrorNotAString() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "v")
        let before = directory.bytes("app.json")
        for (text, message) in [
            ("{ a = 1; b }", "expected '=' after the key 'b' at character 12"),
            ("( 1, 2", "expected ',' or ')' after an array item at character 7"),
            ("<integer>x</integer>", "malformed XML property list value")
        ] {
            let result = try defaults.run(["write", "app", "k", text])
            #expect(result.status == 1, "\(text): \(result)")
            #expect(result.stderr.contains(message), "\(text): \(result)")
            #expect(result.stderr.contains("-string"), "\(text): \(result)")
            #expect(result.stderr.contains("key 'k' of suite 'app'"), "\(text): \(result)")
        }
        #expect(directory.bytes("app.json") == before)
    }

    @Test func wholeDomainWriteReplacesTheSuite() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "stale", "x")
        try defaults.ok("write", "app", #"{ a = 1; b = (x, "y z"); }"#)
        #expect(try directory.contents("app.json") == ["a": .string("1"), "b": .array([.string("x"), .string("y z")])])
        try defaults.ok("write", "app", "<dict><key>n</key><integer>3</integer></dict>")
        #expect(try directory.contents("app.json") == ["n": .integer(3)])
        try defaults.ok("write", "fresh", "{ k = v; }", "--format", "plist")
        #expect(try directory.contents("fresh.plist") == ["k": .string("v")])
        let notADictionary = try defaults.run(["write", "app", "(1, 2)"])
        #expect(notADictionary.status == 2, "\(notADictionary)")
        #expect(notADictionary.stderr.contains("to replace the whole suite"), "\(notADictionary)")
        #expect(try directory.contents("app.json") == ["n": .integer(3)])
    }

    @Test func optionLookingKeysAndDomains() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let flagAsKey = try defaults.run(["write", "app", "-string", "oops"])
        #expect(flagAsKey.status == 2, "\(flagAsKey)")
        #expect(flagAsKey.stderr.contains("'-string' is where the key goes"), "\(flagAsKey)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("app.json").path))
        // After `--`, a key may begin with a dash.
        try defaults.ok("write", "app", "--", "-dashed", "v")
        #expect(try directory.contents("app.json") == ["-dashed": .string("v")])

        for arguments in [["-currentHost", "read", "app"], ["write", "-currentHost", "k", "v"]] {
            let result = try defaults.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains("is not supported on Linux"), "\(arguments): \(result)")
        }
        let dashed = try defaults.run(["read", "-app"])
        #expect(dashed.status == 2)
        #expect(dashed.stderr.contains("suite names cannot begin with '-'"), "\(dashed)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                ".app.json.lock", ".observable-defaults", "app.json"
            ])
    }

    @Test func pathAsDomain() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let elsewhere = directory.file("etc/myapp")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let settings = elsewhere.appendingPathComponent("settings.plist")
        try SuiteFormat.propertyList.encodeSuite(["port": .integer(80)]).write(to: settings)

        #expect(try defaults.ok("read", settings.path) == "{\n    port = 80;\n}\n")
        #expect(try defaults.ok("read", settings.path, "port") == "80\n")
        // Without the extension, PATH.json or PATH.plist is used, as macOS adds .plist.
        #expect(try defaults.ok("read", elsewhere.appendingPathComponent("settings").path, "port") == "80\n")
        try defaults.ok("write", settings.path, "host", "example.org")
        #expect(
            try SuiteFormat.propertyList.decodeSuite(Data(contentsOf: settings), fileURL: settings)
                == ["port": .integer(80), "host": .string("example.org")])

        // Relative paths are relative to the working directory; a new file is created in its extension's format.
        let relative = try defaults.run(["write", "./x.json", "key", "-int", "1"], workingDirectory: elsewhere)
        #expect(relative.status == 0, "\(relative)")
        let created = elsewhere.appendingPathComponent("x.json")
        #expect(try SuiteFormat.json.decodeSuite(Data(contentsOf: created), fileURL: created) == ["key": .integer(1)])
        #expect(
            try defaults.run(["read-type", "./x.json", "key"], workingDirectory: elsewhere).stdout
                == "Type is integer\n")
        #expect(try defaults.run(["path", "./x.json"], workingDirectory: elsewhere).stdout == created.path + "\n")
        #expect(try defaults.run(["delete", "./x.json", "key"], workingDirectory: elsewhere).status == 0)
        #expect(try SuiteFormat.json.decodeSuite(Data(contentsOf: created), fileURL: created).isEmpty)

        let missing = try defaults.run(["read", "./absent.plist"], workingDirectory: elsewhere)
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains(
                "Settings file './absent.plist' does not exist (looked for \(elsewhere.path)/absent.plist)"),
            "\(missing)")
        let noDirectory = try defaults.run(["write", "no/such/dir/x.json", "k", "v"], workingDirectory: elsewhere)
        #expect(noDirectory.status == 1)
        #expect(noDirectory.stderr.contains("directory does not exist"), "\(noDirectory)")
        // Nothing reached the suites directory itself.
        #expect(try defaults.ok("domains") == "")
    }

    @Test func domainsOnOneLineAndExportAsAPropertyList() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "b", "k", "v")
        try defaults.ok("write", "a", "k", "v", "--format", "plist")
        try defaults.ok("write", "c.d", "k", "v")
        #expect(try defaults.ok("domains") == "a, b, c.d\n")
        #expect(try defaults.ok("domains", "--json") == "[\n  \"a\",\n  \"b\",\n  \"c.d\"\n]\n")

        let plist = try SuiteFormat.propertyList.encodeSuite(["k": .string("v")])
        let json = try SuiteFormat.json.encodeSuite(["k": .string("v")])
        #expect(try defaults.run(["export", "b", "-"]).stdoutData == plist)
        #expect(try defaults.run(["export", "b", "-", "--format", "json"]).stdoutData == json)
        // A file: `.json` asks for JSON, anything else is a property list, and --format wins.
        try defaults.ok("export", "a", directory.file("out.json").path)
        try defaults.ok("export", "b", directory.file("out.txt").path)
        try defaults.ok("export", "b", directory.file("forced.plist").path, "--format", "json")
        #expect(directory.bytes("out.json") == json)
        #expect(directory.bytes("out.txt") == plist)
        #expect(directory.bytes("forced.plist") == json)
    }

    @Test(arguments: ["json", "plist"])
    func floatsDatesAndDataReadAlikeInBothFormats(format: String) throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let options = ["--format", format]
        try defaults.ok(["write", "app", "f", "-float", "5"] + options)
        try defaults.ok(["write", "app", "i", "-int", "5"] + options)
        try defaults.ok(["write", "app", "d", "-date", "2024-05-01T12:30:00Z"] + options)
        try defaults.ok(["write", "app", "x", "-data", "00ff"] + options)
        try defaults.ok(["write", "app", "word", "dark"] + options)
        try defaults.ok(["write", "app", "list", "-array", "-date", "2024-05-01T12:30:00Z", "-data", "00ff"] + options)

        #expect(try defaults.ok("read-type", "app", "f") == "Type is float\n")
        #expect(try defaults.ok("read-type", "app", "f", "--json") == "\"float\"\n")
        #expect(try defaults.ok("read-type", "app", "i") == "Type is integer\n")
        #expect(try defaults.ok("read", "app", "f") == "5.0\n")
        #expect(try defaults.ok("read", "app", "i") == "5\n")
        // A single date prints without quotes; data and dates print alike whatever the suite's format.
        #expect(try defaults.ok("read", "app", "d") == "2024-05-01 12:30:00 +0000\n")
        #expect(try defaults.ok("read", "app", "x") == "{length = 2, bytes = 0x00ff}\n")
        #expect(try defaults.ok("read", "app", "word") == "dark\n")
        let whole = try defaults.ok("read", "app")
        #expect(whole.contains("d = \"2024-05-01 12:30:00 +0000\";"), "\(whole)")
        #expect(whole.contains("x = {length = 2, bytes = 0x00ff};"), "\(whole)")
        #expect(whole.contains("word = dark;"), "\(whole)")
        #expect(
            whole.contains(
                "list = (\n        \"2024-05-01 12:30:00 +0000\",\n        {length = 2, bytes = 0x00ff}\n    );"),
            "\(whole)")
        if format == "json" {
            #expect(try defaults.ok("read-type", "app", "d") == "Type is string (an ISO 8601 date)\n")
            #expect(try defaults.ok("read-type", "app", "x") == "Type is string (base64 data, 2 bytes)\n")
            #expect(try defaults.ok("read-type", "app", "word") == "Type is string\n")
            // The file is unchanged by reading: 5.0 stays a double, dates and data stay strings.
            #expect(try directory.contents("app.json")["f"] == .double(5))
            #expect(try directory.contents("app.json")["d"] == .string("2024-05-01T12:30:00.000Z"))
            #expect(String(decoding: directory.bytes("app.json"), as: UTF8.self).contains("\"f\": 5.0"))
        } else {
            #expect(try defaults.ok("read-type", "app", "d") == "Type is date\n")
            #expect(try defaults.ok("read-type", "app", "x") == "Type is data\n")
        }
    }

    @Test func importDetectsTheFormatByContent() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let help = try defaults.ok("import", "--help")
        #expect(help.contains("detected from the content"), "\(help)")
        // A property list named .json, and JSON named .plist: the content decides.
        let plistNamedJSON = directory.file("settings.json")
        try SuiteFormat.propertyList.encodeSuite(["n": .integer(1)]).write(to: plistNamedJSON)
        try defaults.ok("import", "one", plistNamedJSON.path)
        #expect(try directory.contents("one.json") == ["n": .integer(1)])
        let jsonNamedPlist = directory.file("settings.plist")
        try Data(#"{"m": [1.5]}"#.utf8).write(to: jsonNamedPlist)
        try defaults.ok("import", "two", jsonNamedPlist.path)
        #expect(try directory.contents("two.json") == ["m": .array([.double(1.5)])])
    }
}
