import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The suite's own observation API: filters, scopes, cancellation, and the async sequence.
@Suite struct ObservationTests {
    let directory = TemporaryDirectory()

    @Test func filtersByKeysPrefixAndBoth() throws {
        let suite = try DefaultsSuite(name: "filters", directory: directory.url)
        let byKeys = ChangeRecorder(), byPrefix = ChangeRecorder(), byBoth = ChangeRecorder(), all = ChangeRecorder()
        let observations = [
            suite.observe(keys: ["net_host", "level"], scope: .thisProcess) { byKeys.record($0) },
            suite.observe(prefix: "net_", scope: .thisProcess) { byPrefix.record($0) },
            suite.observe(keys: ["net_host", "level"], prefix: "net_", scope: .thisProcess) { byBoth.record($0) },
            suite.observe(scope: .thisProcess) { all.record($0) }
        ]
        defer { observations.forEach { $0.cancel() } }

        suite.performBatchUpdates {
            suite.set("a", forKey: "net_host")
            suite.set(1, forKey: "net_port")
            suite.set("debug", forKey: "level")
        }
        let local = DefaultsChangeOrigin.thisProcess
        #expect(byKeys.changes == [.init(keys: ["net_host"], origin: local), .init(keys: ["level"], origin: local)])
        #expect(
            byPrefix.changes == [.init(keys: ["net_host"], origin: local), .init(keys: ["net_port"], origin: local)])
        #expect(byBoth.changes == [.init(keys: ["net_host"], origin: local)])
        #expect(all.changes.count == 3)
    }

    @Test func equalWritesNotifyNothing() throws {
        let suite = try DefaultsSuite(name: "equal", directory: directory.url)
        suite.set(5.0, forKey: "ratio")
        let recorder = ChangeRecorder()
        let observation = suite.observe(scope: .thisProcess) { recorder.record($0) }
        defer { observation.cancel() }
        suite.set(5.0, forKey: "ratio")
        suite.removeObject(forKey: "never-set")
        #expect(recorder.changes.isEmpty)
        suite.set(5, forKey: "ratio")
        #expect(
            recorder.changes == [.init(keys: ["ratio"], origin: .thisProcess)], "5 (integer) differs from 5.0 (double)")
    }

    @Test func anotherHandleInThisProcessIsThisProcess() throws {
        let first = try DefaultsSuite(name: "handles", directory: directory.url)
        let second = try DefaultsSuite(name: "handles", directory: directory.url)
        let recorder = ChangeRecorder()
        let observation = first.observe(scope: .thisProcess) { recorder.record($0) }
        defer { observation.cancel() }
        second.set(true, forKey: "flag")
        #expect(recorder.changes == [.init(keys: ["flag"], origin: .thisProcess)])
    }

    @Test func registeringADefaultForAMissingKeyNotifies() throws {
        let suite = try DefaultsSuite(name: "register", directory: directory.url)
        suite.set(1, forKey: "stored")
        let recorder = ChangeRecorder()
        let observation = suite.observe(scope: .thisProcess) { recorder.record($0) }
        defer { observation.cancel() }
        suite.register(defaults: ["stored": 2, "missing": 3])
        #expect(recorder.changes == [.init(keys: ["missing"], origin: .thisProcess)])
    }

    @Test func cancelledObservationHearsNothingMore() throws {
        let suite = try DefaultsSuite(name: "cancel", directory: directory.url)
        let recorder = ChangeRecorder()
        let observation = suite.observe(scope: .thisProcess) { recorder.record($0) }
        suite.set(1, forKey: "a")
        observation.cancel()
        #expect(observation.isCancelled)
        suite.set(2, forKey: "a")
        #expect(recorder.changes.count == 1)
    }

    @Test func releasedTokenStopsTheObservation() throws {
        let suite = try DefaultsSuite(name: "release", directory: directory.url)
        let recorder = ChangeRecorder()
        do {
            _ = suite.observe(scope: .thisProcess) { recorder.record($0) }
        }
        suite.set(1, forKey: "a")
        #expect(recorder.changes.isEmpty)
    }

    @Test func asyncSequenceDeliversLocalAndOutsideChanges() async throws {
        let suite = try DefaultsSuite(name: "stream", directory: directory.url)
        let stream = suite.changes(keys: ["a", "b"])
        suite.set(1, forKey: "a")
        suite.set(1, forKey: "ignored")
        #expect(try TestAgent.run(["set", suite.fileURL.path, "b", "int:2"]) == 0)
        var received: [DefaultsChange] = []
        for await change in stream {
            received.append(change)
            if received.count == 2 { break }
        }
        #expect(received == [.init(keys: ["a"], origin: .thisProcess), .init(keys: ["b"], origin: .outside)])
    }

    @Test func errorsAsyncSequenceDeliversFileErrors() async throws {
        let suite = try DefaultsSuite(name: "error-stream", directory: directory.url)
        let errors = suite.errors()
        let changes = suite.changes()  // keeps the file watched
        try HandEdit.renameOver(suite.fileURL, "{ \"a\": tru }")
        var iterator = errors.makeAsyncIterator()
        let error = await iterator.next()
        #expect(error?.kind == .malformedFile)
        #expect(error?.line == 1)
        _ = changes
    }

    @Test func directoryResolutionOrder() {
        let explicit = SuiteLocation.defaultDirectory(environment: [
            "OBSERVABLE_DEFAULTS_DIRECTORY": "/srv/settings", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/me"
        ])
        #expect(explicit.path == "/srv/settings")
        let xdg = SuiteLocation.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/me"])
        #expect(xdg.path == "/xdg/observable-defaults")
        let relativeXDGIsIgnored = SuiteLocation.defaultDirectory(environment: [
            "XDG_CONFIG_HOME": "xdg", "HOME": "/home/me"
        ])
        #expect(relativeXDGIsIgnored.path == "/home/me/.config/observable-defaults")
        let home = SuiteLocation.defaultDirectory(environment: ["HOME": "/home/me"])
        #expect(home.path == "/home/me/.config/observable-defaults")
    }

    @Test func standardSuiteNameComesFromTheEnvironmentOrTheProcess() {
        #expect(
            SuiteLocation.standardSuiteName(environment: ["OBSERVABLE_DEFAULTS_STANDARD_SUITE": "com.example.app"])
                == "com.example.app")
        #expect(
            SuiteLocation.standardSuiteName(environment: ["OBSERVABLE_DEFAULTS_STANDARD_SUITE": "../bad"])
                == SuiteLocation.standardSuiteName(environment: [:]))
        #expect(!SuiteLocation.standardSuiteName(environment: [:]).isEmpty)
    }
}
