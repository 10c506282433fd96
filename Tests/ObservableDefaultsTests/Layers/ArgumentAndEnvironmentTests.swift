import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The argument domain (`-key value`) and the environment layer: their parsing, and real child processes.
@Suite struct ArgumentAndEnvironmentTests {
    @Test func argumentsFollowFoundationsPairRule() {
        let domain = ArgumentDomain(arguments: [
            "/usr/bin/daemon", "-count", "7", "-name", "a b", "-list", "(a, b)", "-ratio", "0.5", "-on", "true",
            "-flag", "-verbose", "--filter", "X", "--testing-library", "swift-testing", "-", "x", "-last"
        ])
        #expect(domain.values[ExactKey("count")] == .integer(7))
        #expect(domain.values[ExactKey("name")] == .string("a b"))
        #expect(domain.values[ExactKey("list")] == .array([.string("a"), .string("b")]))
        #expect(domain.values[ExactKey("ratio")] == .double(0.5))
        #expect(domain.values[ExactKey("on")] == .bool(true))
        // `-flag` is followed by a flag, `-last` by nothing: neither is a setting; nor are long options.
        #expect(Set(domain.values.keys.map(\.string)) == ["count", "name", "list", "ratio", "on"])
    }

    @Test func theTestRunnersOwnCommandLineIsNoSetting() {
        // `swift test` runs this binary with its own options (`--testing-library swift-testing`, `--filter X`):
        // long options are never settings, so only a single-dash option followed by a value could be one.
        let arguments = CommandLine.arguments
        let singleDashPairs = zip(arguments.dropFirst(), arguments.dropFirst(2)).filter {
            $0.0.hasPrefix("-") && !$0.0.hasPrefix("--") && !$0.1.hasPrefix("-")
        }
        #expect(ArgumentDomain.process.values.count == singleDashPairs.count, "\(arguments)")
        #expect(!ArgumentDomain.process.values.keys.contains { $0.string.hasPrefix("-") })
    }

    @Test func settingTextIsTypedLikeTheToolsBareValues() throws {
        #expect(DefaultsValue(settingText: "7") == .integer(7))
        #expect(DefaultsValue(settingText: "-3") == .integer(-3))
        #expect(DefaultsValue(settingText: "1e3") == .double(1000))
        #expect(DefaultsValue(settingText: "false") == .bool(false))
        #expect(DefaultsValue(settingText: "{ a = 1; }") == .dictionary(["a": .string("1")]))
        #expect(DefaultsValue(settingText: "<integer>5</integer>") == .integer(5))
        #expect(DefaultsValue(settingText: "(unclosed") == .string("(unclosed"), "as Foundation: text, not an error")
        #expect(DefaultsValue(settingText: "nan") == .string("nan"))
        #expect(throws: DefaultsError.self) { try DefaultsValue(propertyListText: "(unclosed") }
    }

    @Test func environmentVariablesAreNamedAfterTheirKeys() {
        let layer = EnvironmentLayer(prefix: "ACC_")
        #expect(layer.variableName(forKey: "logLevel") == "ACC_LOG_LEVEL")
        #expect(layer.variableName(forKey: "net.port") == "ACC_NET_PORT")
        #expect(layer.variableName(forKey: "max-size") == "ACC_MAX_SIZE")
        #expect(layer.variableName(forKey: "http2Enabled") == "ACC_HTTP2_ENABLED")
        #expect(layer.variableName(forKey: "URL") == "ACC_URL")
        let entries = layer.entries(in: ["ACC_LOG_LEVEL": "debug", "ACC_": "x", "OTHER": "1", "ACC_NET_PORT": "8080"])
        #expect(entries.count == 2)
        #expect(entries["ACC_NET_PORT"] == LayerEntry(value: .integer(8080), origin: .environment("ACC_NET_PORT")))
    }

    @Test func aChildStartedWithArgumentsAndVariablesReadsThem() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("child.json")
        try Data(#"{"count": 1, "logLevel": "info", "net.port": 80, "name": "file"}"#.utf8).write(to: file)
        let process = Process()
        process.executableURL = BuiltProduct.url("defaults-test-agent")
        process.arguments = [
            "layers", file.path, "ACC_", "count,logLevel,net.port,name,list", "-count", "7", "-list", "(a, b)",
            "--ignored", "value"
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["ACC_LOG_LEVEL"] = "debug"
        environment["ACC_NET_PORT"] = "8080"
        environment["ACC_COUNT"] = "3"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("count=integer(7) origin=argument"), "arguments are above the environment: \(lines)")
        #expect(lines.contains("logLevel=string(\"debug\") origin=environment ACC_LOG_LEVEL"))
        #expect(lines.contains("net.port=integer(8080) origin=environment ACC_NET_PORT"))
        #expect(lines.contains("name=string(\"file\") origin=file \(file.path)"))
        #expect(
            lines.contains(
                "list=array([ObservableDefaults.DefaultsValue.string(\"a\"), ObservableDefaults.DefaultsValue.string(\"b\")]) origin=argument"
            ))
    }

    @Test func childProcessesInheritTheTestLayerPlaces() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let places = LayerPlaces.current()
        #expect(text.contains("OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY=\(places.managedDirectory.path)"))
        #expect(text.contains("XDG_CONFIG_DIRS=\(places.systemDirectories[0].deletingLastPathComponent().path)"))
    }
}
