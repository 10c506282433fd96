import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The error channel says when a problem starts and when it is over, once each.
@Suite struct ErrorEventTests {
    let directory = TemporaryDirectory()

    @Test func aBrokenFileFixedByHandIsOneErrorAndOneRecovery() throws {
        let file = directory.file("app.json")
        try Data("{\"a\": 1}".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let events = ErrorEventRecorder()
        // watched while observed
        let observations = [suite.observeErrorEvents { events.record($0) }, suite.observe { _ in }]
        defer { observations.forEach { $0.cancel() } }
        try HandEdit.renameOver(file, "{\"a\": 2,")
        #expect(eventually { events.occurred.count == 1 })
        #expect(events.occurred.first?.kind == .malformedFile)
        #expect(events.recovered.isEmpty)
        try HandEdit.renameOver(file, "{\"a\": 3}")
        #expect(eventually { suite.integer(forKey: "a") == 3 && events.recovered.count == 1 })
        #expect(events.recovered.first == events.occurred.first, "the recovery names the problem that ended")
        #expect(suite.currentErrors.isEmpty)
        // A marker write that comes back through the watcher: every event of the fix has arrived by then.
        try HandEdit.renameOver(file, "{\"a\": 4}")
        #expect(eventually { suite.integer(forKey: "a") == 4 })
        #expect(events.events.count == 2, "\(events.events)")
    }

    @Test func anErrorPublishedBeforeAnyoneListensIsToldToTheFirstObserverOnly() throws {
        let suite = try DefaultsSuite(fileURL: directory.file("app.json"))
        suite.set(NSObject(), forKey: "odd")  // refused, and reported with nobody listening
        let first = ErrorRecorder()
        let second = ErrorRecorder()
        let observations = [suite.observeErrors { first.record($0) }, suite.observeErrors { second.record($0) }]
        defer { observations.forEach { $0.cancel() } }
        #expect(first.errors.map(\.key) == ["odd"])
        #expect(second.errors.isEmpty, "heard once, by the first")
        #expect(suite.currentErrors.isEmpty, "an error that happened is no problem that persists")
    }

    @Test func aCloudStoresErrorPublishedBeforeAnyoneListensIsToldToTheFirstObserver() {
        let store = CloudKeyValueStore.inMemory(
            limits: CloudLimits(maximumKeyCount: 1, maximumTotalBytes: 100, maximumValueBytes: 10, maximumKeyBytes: 64))
        store.set(String(repeating: "v", count: 20), forKey: "big")
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(errors.errors.map(\.key) == ["big"])
        #expect(errors.errors.first?.kind == .unsupportedValue)
    }

    @Test func theChannelKeepsTheLastEventsNobodyHeard() {
        var channel = ErrorChannel()
        for index in 0...ErrorChannel.unheardLimit {
            _ = channel.publish(DefaultsError(.cloud, message: "error \(index)"))
        }
        let flaky = DefaultsError(.cloud, message: "came and went")
        _ = channel.report(flaky, topic: .account)
        _ = channel.clear(.account)
        let down = DefaultsError(.cloud, message: "down")
        _ = channel.report(down, topic: .connection)
        let (_, delivery) = channel.add { _ in }
        let expected: [DefaultsErrorEvent] =
            (4...ErrorChannel.unheardLimit).map { .occurred(DefaultsError(.cloud, message: "error \($0)")) }
            + [.occurred(flaky), .recovered(flaky), .occurred(down)]
        #expect(delivery.events == expected, "the last 64 events, a persisting problem told once")
        #expect(channel.add { _ in }.delivery.events == [.occurred(down)], "the next hears what persists only")
    }

    @Test func observeErrorsStillHearsOnlyErrors() throws {
        let file = directory.file("app.json")
        try Data("{\"a\": 1}".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let errors = ErrorRecorder()
        let events = ErrorEventRecorder()
        let observations = [
            suite.observeErrors { errors.record($0) }, suite.observeErrorEvents { events.record($0) },
            suite.observe { _ in }
        ]
        defer { observations.forEach { $0.cancel() } }
        try HandEdit.renameOver(file, "{")
        #expect(eventually { errors.errors.count == 1 })
        try HandEdit.renameOver(file, "{}")
        #expect(eventually { events.recovered.count == 1 })
        #expect(errors.errors.count == 1)
    }
}

/// A cluster out of reach is one error however many attempts fail, and its return is one recovery.
@Suite(.serialized, EtcdCluster.required) struct EtcdErrorEventTests {
    let directory = TemporaryDirectory()

    @Test func anOutageIsOneErrorAndOneRecovery() throws {
        let etcd = try EtcdCluster(members: 1)
        let store = try cloudMachine(etcd.plainEndpoints, namespace: freshNamespace(), state: directory.file("state"))
        store.set(1, forKey: "a")
        #expect(store.synchronize(timeout: 30))
        let events = ErrorEventRecorder()
        let observation = store.observeErrorEvents { events.record($0) }
        defer { observation.cancel() }

        etcd.kill(0)
        #expect(eventually(timeout: .seconds(20)) { events.occurred.count == 1 })
        // Later attempts fail too (refused now: the watch's end came first), and are not published again.
        #expect(
            eventually(timeout: .seconds(20)) { store.currentErrors.contains { $0.errorNumber == ECONNREFUSED } },
            "\(store.currentErrors)")
        #expect(!store.synchronize(timeout: 2))
        #expect(events.occurred.count == 1, "\(events.events)")

        try etcd.restart(0)
        #expect(eventually(timeout: .seconds(20)) { events.recovered.count == 1 }, "\(events.events)")
        #expect(store.synchronize(timeout: 30))
        #expect(store.currentErrors.isEmpty, "\(store.currentErrors)")
        #expect(events.occurred.count == 1 && events.recovered.count == 1, "\(events.events)")
    }
}
