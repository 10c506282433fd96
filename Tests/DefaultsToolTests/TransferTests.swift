import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// `export` and `import`: files and `-` as stdin/stdout, both formats, round trips.
@Suite struct TransferTests {
    /// A suite holding one value of every kind.
    private func seed(_ defaults: Defaults, _ name: String, format: String) throws {
        let options = ["--format", format]
        try defaults.ok(["write", name, "s", "text with \"quotes\" and ünïcode"] + options)
        try defaults.ok(["write", name, "i", "-int", "-7"] + options)
        try defaults.ok(["write", name, "f", "-float", "5"] + options)
        try defaults.ok(["write", name, "b", "-bool", "NO"] + options)
        try defaults.ok(["write", name, "d", "-date", "2024-02-29T23:59:59Z"] + options)
        try defaults.ok(["write", name, "x", "-data", "00ff"] + options)
        try defaults.ok(["write", name, "a", "-array", "-int", "1", "two"] + options)
        try defaults.ok(["write", name, "m", "-dict", "k", "-float", "0.25"] + options)
    }

    @Test(arguments: ["json", "plist"])
    func exportToFileAndImportBack(format: String) throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try seed(defaults, "source", format: format)
        let original = try directory.contents("source.\(format)")
        for exportExtension in ["json", "plist"] {
            let exported = directory.file("exported-\(format).\(exportExtension)")
            try defaults.ok("export", "source", exported.path)
            let exportFormat = try #require(SuiteFormat(fileExtension: exportExtension))
            let fileContents = try exportFormat.decodeSuite(try Data(contentsOf: exported), fileURL: exported)
            #expect(fileContents.count == original.count)
            let target = "copy-\(exportExtension)"
            try defaults.ok("import", target, exported.path, "--format", format)
            let copied = try directory.contents("\(target).\(format)")
            if format == exportExtension {
                #expect(copied == original, "round trip through .\(exportExtension)")
            } else {
                // Through a JSON file, dates and data become strings; through a plist, they keep their types.
                #expect(copied.keys.sorted() == original.keys.sorted())
                #expect(copied["i"] == .integer(-7))
                #expect(copied["f"] == .double(5))
                #expect(copied["b"] == .bool(false))
                #expect(copied["s"] == original["s"])
            }
        }
    }

    /// Keys that differ only by Unicode normalisation are two keys of the suite (issue 13, item 7): export
    /// writes both, import brings both back, and neither a `String`-keyed dictionary nor an import drops one.
    @Test(arguments: ["json", "plist"])
    func keysDifferingOnlyByNormalisationSurviveExportAndImport(format: String) throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try Data(#"{ "\#(composed)": 1, "\#(decomposed)": 2 }"#.utf8).write(to: directory.file("source.json"))
        func entries(_ file: URL) throws -> [[UInt8]: DefaultsValue] {
            let format = try #require(SuiteFormat(fileExtension: file.pathExtension))
            let list = try format.decodeSuiteEntries(try Data(contentsOf: file), fileURL: file)
            return Dictionary(uniqueKeysWithValues: list.map { (Array($0.key.utf8), $0.value) })
        }
        let expected: [[UInt8]: DefaultsValue] = [
            Array(composed.utf8): .integer(1), Array(decomposed.utf8): .integer(2)
        ]
        let exported = directory.file("exported.\(format)")
        try defaults.ok("export", "source", exported.path)
        #expect(try entries(exported) == expected)
        // Into a suite that already holds one form with another value: both end as in the imported file.
        try Data(#"{ "\#(decomposed)": 9, "other": 3 }"#.utf8).write(to: directory.file("target.json"))
        try defaults.ok("import", "target", exported.path)
        #expect(try entries(directory.file("target.json")) == expected)
    }

    @Test(arguments: ["json", "plist"])
    func exportToStdoutAndImportFromStdin(format: String) throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try seed(defaults, "source", format: format)
        let original = try directory.contents("source.\(format)")
        // Whatever the suite's format, `-` is an XML property list, as on macOS.
        let exported = try defaults.run(["export", "source", "-"])
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.stdout.hasPrefix("<?xml"))
        let imported = try defaults.run(["import", "piped", "-", "--format", format], stdin: exported.stdoutData)
        #expect(imported.status == 0, "\(imported)")
        // Through a plist, dates and data come back as dates and data: in a JSON suite, the same strings.
        #expect(try directory.contents("piped.\(format)") == original)
        // --format chooses the output format of `-`.
        let asPlist = try defaults.ok("export", "source", "-", "--format", "plist")
        #expect(asPlist.contains("<plist"))
        let asJSON = try defaults.ok("export", "source", "-", "--format", "json")
        #expect(asJSON.hasPrefix("{\n"))
    }

    @Test func importReplacesTheContents() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "stale", "x")
        try defaults.ok("write", "app", "kept", "-int", "1")
        let json = Data(#"{"kept": 2, "added": [true, 1.5]}"#.utf8)
        try defaults.ok("import", "app", "-", stdin: json)
        #expect(
            try directory.contents("app.json") == ["kept": .integer(2), "added": .array([.bool(true), .double(1.5)])])
    }

    @Test func importReadsAPlistFromStdinAndBinaryPlists() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>n</key><integer>3</integer><key>r</key><real>2</real></dict></plist>
            """
        try defaults.ok("import", "fromxml", "-", stdin: Data(xml.utf8))
        #expect(try directory.contents("fromxml.json") == ["n": .integer(3), "r": .double(2)])

        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["word": "hi", "count": 5], format: .binary, options: 0)
        let binaryFile = directory.file("input.plist")
        try binary.write(to: binaryFile)
        try defaults.ok("import", "frombinary", binaryFile.path)
        #expect(try directory.contents("frombinary.json") == ["word": .string("hi"), "count": .integer(5)])
    }

    @Test func importOfABrokenFileNamesLineAndColumnAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let defaults = Defaults(directory: directory)
        try defaults.ok("write", "app", "k", "v")
        let before = directory.bytes("app.json")
        let broken = directory.file("broken.json")
        try Data("{\n  \"a\": 1,\n  \"b\": [1 2]\n}\n".utf8).write(to: broken)
        let result = try defaults.run(["import", "app", broken.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(broken.path):3:"), "\(result)")
        #expect(directory.bytes("app.json") == before)
        let fromStdin = try defaults.run(["import", "app", "-"], stdin: Data("{\"a\": }".utf8))
        #expect(fromStdin.status == 1)
        #expect(fromStdin.stderr.contains(":1:7"), "\(fromStdin)")
    }
}

extension Defaults {
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments)
        #expect(
            result.status == 0, "defaults \(arguments.joined(separator: " ")) failed: \(result)",
            sourceLocation: sourceLocation)
        return result.stdout
    }
}
