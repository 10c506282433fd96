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
        let observations = [suite.observeErrorEvents { events.record($0) }, suite.observe { _ in }]  // watched while observed
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

    @Test func observeErrorsStillHearsOnlyErrors() throws {
        let file = directory.file("app.json")
        try Data("{\"a\": 1}".utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let errors = ErrorRecorder()
        let events = ErrorEventRecorder()
        let observations = [suite.observeErrors { errors.record($0) }, suite.observeErrorEvents { events.record($0) }, suite.observe { _ in }]
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
        #expect(eventually(timeout: .seconds(20)) { store.currentErrors.contains { $0.errorNumber == ECONNREFUSED } }, "\(store.currentErrors)")
        #expect(!store.synchronize(timeout: 2))
        #expect(events.occurred.count == 1, "\(events.events)")

        try etcd.restart(0)
        #expect(eventually(timeout: .seconds(20)) { events.recovered.count == 1 }, "\(events.events)")
        #expect(store.synchronize(timeout: 30))
        #expect(store.currentErrors.isEmpty, "\(store.currentErrors)")
        #expect(events.occurred.count == 1 && events.recovered.count == 1, "\(events.events)")
    }
}
