import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// `write` with every type flag, and the reading verbs, on JSON and property-list suites.
@Suite struct WriteReadTests {
    @Test func everyTypeFlagOnAJSONSuite() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "bare", "hello world")
        try defaults.ok("write", "app", "s", "-string", "-dash")
        try defaults.ok("write", "app", "i", "-int", "-42")
        try defaults.ok("write", "app", "i2", "-integer", "9223372036854775807")
        try defaults.ok("write", "app", "f", "-float", "5")
        try defaults.ok("write", "app", "f2", "-double", "2.5e-3")
        try defaults.ok("write", "app", "d", "-date", "2024-05-01T12:30:00.250Z")
        try defaults.ok("write", "app", "x", "-data", "0aff10")
        try defaults.ok("write", "app", "a", "-array", "one", "-int", "2", "-bool", "YES")
        try defaults.ok("write", "app", "a", "-array-add", "-float", "3.5")
        try defaults.ok("write", "app", "new-array", "-array-add", "first")
        try defaults.ok("write", "app", "empty", "-array")
        try defaults.ok("write", "app", "m", "-dict", "k1", "v1", "k2", "-int", "7")
        try defaults.ok("write", "app", "m", "-dict-add", "k3", "-bool", "false", "k1", "replaced")
        try defaults.ok("write", "app", "new-dict", "-dict-add", "k", "v")

        let contents = try directory.contents("app.json")
        #expect(contents["bare"] == .string("hello world"))
        #expect(contents["s"] == .string("-dash"))
        #expect(contents["i"] == .integer(-42))
        #expect(contents["i2"] == .integer(.max))
        #expect(contents["f"] == .double(5))
        #expect(contents["f2"] == .double(0.0025))
        // JSON has no date or data type: dates are ISO 8601 UTC strings with milliseconds, data is base64.
        #expect(contents["d"] == .string("2024-05-01T12:30:00.250Z"))
        #expect(contents["x"] == .string(Data([0x0a, 0xff, 0x10]).base64EncodedString()))
        #expect(contents["a"] == .array([.string("one"), .integer(2), .bool(true), .double(3.5)]))
        #expect(contents["new-array"] == .array([.string("first")]))
        #expect(contents["empty"] == .array([]))
        #expect(contents["m"] == .dictionary(["k1": .string("replaced"), "k2": .integer(7), "k3": .bool(false)]))
        #expect(contents["new-dict"] == .dictionary(["k": .string("v")]))
        // The file is the library's pretty JSON, and `5.0` stays a double.
        let text = String(decoding: directory.bytes("app.json"), as: UTF8.self)
        #expect(text.contains("\"f\": 5.0"))
    }

    @Test func everyBooleanSpelling() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let spellings: [(String, Bool)] = [
            ("YES", true), ("NO", false), ("yes", true), ("no", false), ("true", true), ("false", false),
            ("TRUE", true), ("1", true), ("0", false)
        ]
        for (index, (spelling, expected)) in spellings.enumerated() {
            let flag = index.isMultiple(of: 2) ? "-bool" : "-boolean"
            try defaults.ok("write", "flags", "k\(index)", flag, spelling)
            #expect(try defaults.stored("flags.json", "k\(index)") == .bool(expected), "\(flag) \(spelling)")
        }
    }

    @Test func propertyListSuiteKeepsDatesAndData() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "native", "d", "-date", "2024-05-01 12:30:00 +0000", "--format", "plist")
        try defaults.ok("write", "native", "x", "-data", "<0a ff>")
        try defaults.ok("write", "native", "day", "-date", "2024-05-01")
        try defaults.ok("write", "native", "frac", "-date", "2024-05-01T12:30:00.750+02:00")
        #expect(!FileManager.default.fileExists(atPath: directory.file("native.json").path))
        let contents = try directory.contents("native.plist")
        let noon = try #require(DateText.parseForTest("2024-05-01T12:30:00Z"))
        #expect(contents["d"] == .date(noon))
        #expect(contents["day"] == .date(try #require(DateText.parseForTest("2024-05-01T00:00:00Z"))))
        // Property lists hold whole seconds.
        #expect(contents["frac"] == .date(try #require(DateText.parseForTest("2024-05-01T10:30:00Z"))))
        #expect(contents["x"] == .data(Data([0x0a, 0xff])))
        #expect(try defaults.ok("read-type", "native", "d") == "Type is date\n")
        #expect(try defaults.ok("read-type", "native", "x") == "Type is data\n")
        #expect(try defaults.ok("read-type", "native", "x", "--json") == "\"data\"\n")
        let human = try defaults.ok("read", "native")
        #expect(human.contains("x = {length = 2, bytes = 0x0aff};"))
        #expect(human.contains("d = \"2024-05-01 12:30:00 +0000\";"))
        let json = try defaults.ok("read", "native", "--json")
        #expect(json.contains("\"d\": \"2024-05-01T12:30:00.000Z\""))
        #expect(json.contains("\"x\": \"Cv8=\""))
        #expect(try defaults.ok("path", "native") == directory.file("native.plist").path + "\n")
    }

    @Test func readPrintsSuitesKeysAndValues() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "name", "web server")
        try defaults.ok("write", "app", "port", "-int", "8080")
        try defaults.ok("write", "app", "ratio", "-float", "0.5")
        try defaults.ok("write", "app", "on", "-bool", "yes")
        try defaults.ok("write", "app", "tags", "-array", "a", "b c")
        try defaults.ok("write", "app", "limits", "-dict", "cpu", "-int", "2")
        try defaults.ok("write", "other", "k", "v")

        #expect(try defaults.ok("read", "app", "name") == "web server\n")
        #expect(try defaults.ok("read", "app", "port") == "8080\n")
        #expect(try defaults.ok("read", "app", "on") == "1\n")
        #expect(try defaults.ok("read", "app", "tags") == "(\n    a,\n    \"b c\"\n)\n")
        #expect(try defaults.ok("read", "app", "name", "--json") == "\"web server\"\n")
        #expect(try defaults.ok("read", "app", "ratio", "--json") == "0.5\n")
        #expect(
            try defaults.ok("read", "app") == """
                {
                    limits = {
                        cpu = 2;
                    };
                    name = "web server";
                    on = 1;
                    port = 8080;
                    ratio = 0.5;
                    tags = (
                        a,
                        "b c"
                    );
                }

                """)
        let json = try defaults.ok("read", "app", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["port"] as? Int == 8080)
        #expect(object["name"] as? String == "web server")

        for (key, type) in [
            ("name", "string"), ("port", "integer"), ("ratio", "float"), ("on", "boolean"),
            ("tags", "array"), ("limits", "dictionary")
        ] {
            #expect(try defaults.ok("read-type", "app", key) == "Type is \(type)\n")
        }
        let everything = try defaults.ok("read", "--json")
        let all = try #require(try JSONSerialization.jsonObject(with: Data(everything.utf8)) as? [String: Any])
        #expect(Set(all.keys) == ["app", "other"])
        #expect(try defaults.ok("read").contains("other = {\n        k = v;\n    };"))
    }

    @Test func domainsListsOnlySuites() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        #expect(try defaults.ok("domains") == "")
        #expect(try defaults.ok("domains", "--json") == "[]\n")
        try defaults.ok("write", "b.suite", "k", "v")
        try defaults.ok("write", "a", "k", "v", "--format", "plist")
        // Not suites: the lock sidecars the writes left, a temporary file, other files, a directory.
        try Data().write(to: directory.file(".b.suite.json.4242.17.tmp"))
        try Data().write(to: directory.file("notes.txt"))
        try FileManager.default.createDirectory(at: directory.file("dir.json"), withIntermediateDirectories: true)
        #expect(FileManager.default.fileExists(atPath: directory.file(".b.suite.json.lock").path))
        #expect(try defaults.ok("domains") == "a, b.suite\n")
        #expect(try defaults.ok("domains", "--json") == "[\n  \"a\",\n  \"b.suite\"\n]\n")
    }

    @Test func findSearchesKeysValuesAndSuiteNames() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "web", "Theme", "dark")
        try defaults.ok("write", "web", "port", "-int", "80")
        try defaults.ok("write", "db", "label", "DARK mode")
        try defaults.ok("write", "db", "nested", "-array", "x", "darkish")
        try defaults.ok("write", "themes", "k", "v")
        let output = try defaults.ok("find", "dark")
        #expect(output.contains("Found 1 key in suite 'web': {\n    Theme = dark;\n}"))
        #expect(output.contains("Found 2 keys in suite 'db'"))
        #expect(!output.contains("port"))
        let byName = try defaults.ok("find", "theme", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(byName.utf8)) as? [String: [String: Any]])
        #expect(Set(object.keys) == ["web", "themes"])
        #expect(object["themes"]?["k"] as? String == "v")
        #expect(
            try defaults.ok("find", "nothing-like-this") == "No suite, key, nor value containing 'nothing-like-this'\n")
    }

    @Test func pathDeleteAndRename() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        #expect(try defaults.ok("path", "fresh") == directory.file("fresh.json").path + "\n")
        #expect(try defaults.ok("path", "fresh", "--format", "plist") == directory.file("fresh.plist").path + "\n")
        #expect(
            try defaults.ok("path", "fresh", "--json")
                == "{\"path\":\"\(directory.file("fresh.json").path)\",\"exists\":false}\n")

        try defaults.ok("write", "app", "old", "-int", "1")
        try defaults.ok("write", "app", "keep", "yes")
        try defaults.ok("rename", "app", "old", "new")
        #expect(try directory.contents("app.json") == ["new": .integer(1), "keep": .string("yes")])
        try defaults.ok("delete", "app", "new")
        #expect(try directory.contents("app.json") == ["keep": .string("yes")])
        try defaults.ok("delete", "app")
        #expect(!FileManager.default.fileExists(atPath: directory.file("app.json").path))
        #expect(try defaults.ok("domains") == "")
    }

    @Test func optionSpellingsAndTheEndOfOptions() throws {
        let directory = TemporaryDirectory()
        let inline = try Built.run(
            "defaults", ["write", "--directory=\(directory.path)", "app", "k", "-int", "1", "--format=plist"],
            directory: nil)
        #expect(inline.status == 0, "\(inline)")
        #expect(try directory.contents("app.plist") == ["k": .integer(1)])
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "dashes", "-string", "--", "--json")
        try defaults.ok("write", "app", "h", "-string", "-h")
        try defaults.ok("write", "app", "negative", "-5")
        #expect(try defaults.stored("app.plist", "dashes") == .string("--json"))
        #expect(try defaults.stored("app.plist", "h") == .string("-h"))
        #expect(try defaults.stored("app.plist", "negative") == .string("-5"))
        #expect(try defaults.ok("read", "-h").hasPrefix("Usage: defaults read"))
    }

    @Test func environmentVariableSelectsTheDirectory() throws {
        let directory = TemporaryDirectory()
        let write = try Built.run("defaults", ["write", "envsuite", "k", "-int", "3"], directory: directory)
        #expect(write.status == 0, "\(write)")
        #expect(try directory.contents("envsuite.json") == ["k": .integer(3)])
        let read = try Built.run("defaults", ["read", "envsuite", "k"], directory: directory)
        #expect(read.stdout == "3\n")
    }
}

/// Parses ISO 8601 dates for expectations.
enum DateText {
    static func parseForTest(_ text: String) -> Date? {
        try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}
