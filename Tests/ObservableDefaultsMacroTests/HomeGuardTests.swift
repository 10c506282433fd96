@testable import ObservableDefaults
import Foundation
import Testing
import TestEnvironment

/// No test may open a suite in the user's home: every way a test can reach a suite without naming a
/// directory resolves to the temporary directory `TestEnvironment` set up before the first test ran.
@Suite struct HomeGuardTests {
    static let realDirectory = FileManager.default.homeDirectoryForCurrentUser
        .appendingPathComponent(".config/\(SuiteLocation.folderName)", isDirectory: true).standardizedFileURL.path

    @Test func suitesOpenedWithoutADirectoryStayInTheTemporaryDirectory() throws {
        let expected = String(cString: try #require(od_test_suites_directory()))
        #expect(ProcessInfo.processInfo.environment["OBSERVABLE_DEFAULTS_DIRECTORY"] == expected)
        #expect(!expected.hasPrefix(Self.realDirectory))
        let byName = try DefaultsSuite(name: "home-guard-\(UUID().uuidString)")
        let settings = Settings()  // its suite is opened by the name in the macro (`suiteName:`)
        settings.host = "guard-\(UUID().uuidString)"
        let written = URL(fileURLWithPath: expected).appendingPathComponent("macro-tests.settings.json")
        #expect(try DefaultsSuite(fileURL: written).value(forKey: "net_host") == .string(settings.host))
        for url in [DefaultsSuite.defaultDirectory, DefaultsSuite.standard.fileURL, byName.fileURL] {
            #expect(url.standardizedFileURL.path.hasPrefix(expected), "\(url.path) is outside \(expected)")
            #expect(!url.standardizedFileURL.path.hasPrefix(Self.realDirectory), "\(url.path) is in the user's home")
        }
    }

    /// A cloud class without development mode uses `CloudKeyValueStore.default`; with no cloud configured
    /// that is a local-only store, whose local copy lives in the state directory `TestEnvironment` exported.
    @Test func cloudLocalCopiesStayInTheTemporaryDirectory() throws {
        let expected = String(cString: try #require(od_test_suites_directory()))
        #expect(ProcessInfo.processInfo.environment["OBSERVABLE_DEFAULTS_CLOUD"] == nil)
        let settings = HomeGuardCloudSettings()
        settings.value = "guard-\(UUID().uuidString)"
        let copy = try #require(CloudKeyValueStore.default.localCopyURL).standardizedFileURL.path
        #expect(copy.hasPrefix(expected + "/state/"), "\(copy) is outside \(expected)/state")
        let home = FileManager.default.homeDirectoryForCurrentUser.standardizedFileURL.path
        #expect(!copy.hasPrefix(home + "/.local"), "\(copy) is in the user's home")
        #expect(CloudKeyValueStore.default.string(forKey: "home-guard.value") == settings.value)
    }
}

@ObservableCloud(prefix: "home-guard.")
final class HomeGuardCloudSettings {
    var value = ""
}
