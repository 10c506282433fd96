import Foundation
import Testing

@Suite struct HelpTests {
    static let verbs = [
        "read", "read-type", "domains", "find", "path", "write", "delete", "rename", "import", "export", "watch",
        "cloud"
    ]

    @Test func overviewNamesEveryVerbAndOption() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try Built.run("defaults", arguments, directory: nil)
            #expect(result.status == 0)
            for verb in Self.verbs { #expect(result.stdout.contains("  \(verb) "), "\(verb) missing from help") }
            for option in ["--directory", "--format", "--json", "OBSERVABLE_DEFAULTS_DIRECTORY"] {
                #expect(result.stdout.contains(option))
            }
        }
    }

    @Test(arguments: verbs)
    func everyVerbHasHelp(verb: String) throws {
        let result = try Built.run("defaults", [verb, "--help"], directory: nil)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Usage: defaults \(verb)"), "\(result)")
        let viaHelp = try Built.run("defaults", ["help", verb], directory: nil)
        #expect(viaHelp.stdout == result.stdout)
    }

    @Test func writeHelpDocumentsEveryTypeFlag() throws {
        let result = try Built.run("defaults", ["write", "--help"], directory: nil)
        for flag in [
            "-string", "-int", "-integer", "-float", "-bool", "-boolean", "-date", "-data", "-array", "-array-add",
            "-dict", "-dict-add"
        ] {
            #expect(result.stdout.contains(flag), "\(flag) undocumented")
        }
    }
}
