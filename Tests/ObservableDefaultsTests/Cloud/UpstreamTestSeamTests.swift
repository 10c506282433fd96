import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

@ObservableCloud(prefix: "seam_")
final class SeamSettings {
    var workers = 4
    @CloudKey(keyValueStoreKey: "log-level") var logLevel: String = "info"
    var limit: Double? = nil
    /// The store the object uses.
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

/// One flag per persisted property of a ``SeamSettings``.
private func trackAll(_ settings: SeamSettings) -> [String: ChangeFlag] {
    [
        "workers": track { _ = settings.workers }, "logLevel": track { _ = settings.logLevel },
        "limit": track { _ = settings.limit }
    ]
}

private func fired(_ flags: [String: ChangeFlag]) -> Set<String> { Set(flags.filter { $0.value.fired }.map(\.key)) }

/// The Apple library's test mode (`UpstreamTestSeam.swift`): its own test suite switches it on and then plays
/// iCloud through a suite and `didChangeExternallyNotification`. Serialized: a post with no object reaches every
/// test-mode store in the process, so one test's post would be read by another test's object.
@Suite(.serialized) struct UpstreamTestSeamTests {
    /// Runs `body` in the Apple library's test mode with a fresh suite, which it is given.
    private func inTestMode(_ body: (DefaultsSuite) throws -> Void) throws {
        let name = "upstream-seam-\(UUID().uuidString)"
        let suite = try #require(DefaultsSuite(suiteName: name))
        try NSUbiquitousKeyValueStoreWrapper.$isTestEnvironment.withValue(true) {
            try NSUbiquitousKeyValueStoreWrapper.$testSuiteName.withValue(name) { try body(suite) }
        }
    }

    private func postChange(of keys: [String], object: Any? = nil, reason: CloudChangeReason? = nil) {
        var userInfo: [String: Any] = [NSUbiquitousKeyValueStoreChangedKeysKey: keys]
        if let reason { userInfo[NSUbiquitousKeyValueStoreChangeReasonKey] = reason.rawValue }
        NotificationCenter.default.post(
            name: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: object, userInfo: userInfo)
    }

    @Test func anObjectStartsFromTheSuiteAndWritesIntoItAtOnce() throws {
        try inTestMode { suite in
            suite.set(7, forKey: "seam_workers")
            let settings = SeamSettings()
            #expect(settings.storeInUse !== CloudKeyValueStore.default)
            #expect(settings.storeInUse !== CloudKeyValueStore.development)
            #expect(settings.workers == 7)
            settings.logLevel = "debug"
            settings.limit = 2.5
            #expect(suite.string(forKey: "seam_log-level") == "debug")
            #expect(suite.double(forKey: "seam_limit") == 2.5)
            settings.limit = nil
            #expect(suite.storedValue(forKey: "seam_limit") == nil)
            // A second object in the same test shares the store.
            #expect(SeamSettings().storeInUse === settings.storeInUse)
        }
    }

    @Test func aPostedChangeUpdatesExactlyTheNamedPropertiesOnThePostingThread() throws {
        try inTestMode { suite in
            let settings = SeamSettings()
            let flags = trackAll(settings)
            suite.set(9, forKey: "seam_workers")
            suite.set(2.5, forKey: "seam_limit")
            postChange(of: ["seam_workers"])
            #expect(settings.workers == 9)
            #expect(settings.limit == nil, "a key the post does not name is not read again")
            #expect(fired(flags) == ["workers"])

            let again = trackAll(settings)
            postChange(of: ["seam_workers"])
            #expect(fired(again).isEmpty, "a named key whose value did not change notifies nobody")

            suite.removeObject(forKey: "seam_workers")
            postChange(of: ["seam_workers"])
            #expect(settings.workers == 4, "a removed key reads the declaration default")
            #expect(fired(again) == ["workers"])
        }
    }

    @Test func aPostedChangeCarriesItsReasonToStoreObservers() throws {
        try inTestMode { suite in
            let store = SeamSettings().storeInUse
            let heard = Locked<[CloudChange]>([])
            let observation = store.observe(keys: ["seam_limit"]) { change in heard.withLock { $0.append(change) } }
            defer { observation.cancel() }
            suite.set(1.5, forKey: "seam_limit")
            postChange(of: ["seam_limit"], reason: .initialSync)
            store.settle()
            #expect(heard.withLock { $0 } == [CloudChange(keys: ["seam_limit"], reason: .initialSync)])
        }
    }

    @Test func aChangePostedByAStoreIsNotReadFromTheSuite() throws {
        try inTestMode { suite in
            let settings = SeamSettings()
            let flags = trackAll(settings)
            suite.set(11, forKey: "seam_workers")
            postChange(of: ["seam_workers"], object: CloudKeyValueStore.development)
            #expect(settings.workers == 4)
            #expect(fired(flags).isEmpty)
        }
    }

    @Test func developmentModeAndAGivenStoreWinOverTestMode() throws {
        try inTestMode { _ in
            let development = SeamSettings(developmentMode: true).storeInUse
            #expect(development.mode == .development && development !== CloudKeyValueStore.development)
            let given = CloudKeyValueStore.development
            #expect(SeamSettings(store: given).storeInUse === given)
        }
    }

    @Test func outsideTestModeAnObjectUsesTheDefaultStore() {
        #expect(SeamSettings().storeInUse === CloudKeyValueStore.default)
    }
}
