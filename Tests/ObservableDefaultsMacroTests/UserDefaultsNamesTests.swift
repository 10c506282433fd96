@testable import ObservableDefaults
import Foundation
import Testing

// The UserDefaults spellings a port calls on its suite (found by running the Apple library's own tests,
// Docs/upstream-tests.md): they must do what the name says on the file store, not just compile.

@ObservableDefaults
final class NamedSuiteSettings {
    var volume = 1
}

@Suite struct UserDefaultsNamesTests {
    private func uniqueName(_ function: String = #function) -> String {
        "names-\(function.filter { $0.isLetter })-\(UUID().uuidString)"
    }

    @Test func suiteNameInitializerOpensTheNamedSuiteInTheDefaultDirectory() throws {
        let name = uniqueName()
        let ported = try #require(DefaultsSuite(suiteName: name))
        #expect(ported.fileURL == DefaultsSuite.defaultDirectory.appendingPathComponent("\(name).json"))
        let settings = NamedSuiteSettings(userDefaults: ported)
        settings.volume = 7
        // Another handle by the usual initializer sees the same values (one storage per file).
        #expect(try DefaultsSuite(name: name).integer(forKey: "volume") == 7)
        // Trimmed like the macro's suiteName.
        #expect(DefaultsSuite(suiteName: " \(name) ")?.fileURL == ported.fileURL)
    }

    @Test func suiteNameInitializerReturnsNilForAnInvalidNameAndOpensTheStandardSuiteForNone() {
        #expect(DefaultsSuite(suiteName: "a/b") == nil)
        #expect(DefaultsSuite(suiteName: "..") == nil)
        #expect(DefaultsSuite(suiteName: nil)?.fileURL == DefaultsSuite.standard.fileURL)
        #expect(DefaultsSuite(suiteName: "  ")?.fileURL == DefaultsSuite.standard.fileURL)
    }

    @Test func synchronizeReadsWhatAnotherProcessWroteAndReportsSuccess() throws {
        let suite = try makeSuite()
        suite.set(1, forKey: "level")
        // Nobody observes the suite, so it is not watched: only synchronize() can pick up the outside edit.
        writeOutside(suite, ["level": .integer(2), "added": .string("by hand")])
        #expect(suite.integer(forKey: "level") == 1)
        #expect(suite.synchronize())
        #expect(suite.integer(forKey: "level") == 2)
        #expect(suite.string(forKey: "added") == "by hand")
    }

    @Test func removePersistentDomainEmptiesThisSuiteAndKeepsRegisteredDefaults() throws {
        let suite = try makeSuite()
        suite.register(defaults: ["level": DefaultsValue.integer(5)])
        suite.set(9, forKey: "level")
        suite.set("x", forKey: "other")
        suite.removePersistentDomain(forName: suite.name)
        #expect(suite.storedKeys.isEmpty)
        #expect(suite.integer(forKey: "level") == 5)
        let onDisk = try suite.format.decode(Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)
        #expect(onDisk.isEmpty)
    }

    @Test func removePersistentDomainEmptiesAnotherSuiteInTheSameDirectory() throws {
        let suite = try makeSuite()
        let other = try makeSuite("other")
        other.set(3, forKey: "kept")
        suite.set(4, forKey: "mine")
        suite.removePersistentDomain(forName: other.name)
        #expect(other.storedKeys.isEmpty)
        #expect(suite.integer(forKey: "mine") == 4)
    }

    @Test func removePersistentDomainReportsAnInvalidName() throws {
        let suite = try makeSuite()
        suite.set(4, forKey: "mine")
        suite.removePersistentDomain(forName: "no/such")
        let error = try #require(suite.lastError)
        #expect(error.description.contains("no/such"))
        #expect(suite.integer(forKey: "mine") == 4)
    }

    @Test func didChangeNotificationHasFoundationsName() {
        #expect(DefaultsSuite.didChangeNotification == Foundation.UserDefaults.didChangeNotification)
    }
}
