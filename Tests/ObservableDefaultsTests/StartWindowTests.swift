import Foundation
import Observation
import Testing
@testable import ObservableDefaults
import TestSupport

// A change made while an object starts — after its load read the source, before the load stored the
// copy — must end up in the object, and its observers must hear it exactly once. `_StartWindow` holds the
// load in that moment, so the change lands there every time.

/// What an object's `willSet` / `didSet` saw, from any thread.
final class StartWindowLog: Sendable {
    private let state = Locked<[String]>([])
    var events: [String] { state.withLock { $0 } }
    func append(_ event: String) { state.withLock { $0.append(event) } }
    /// How many events start with `prefix`.
    func count(_ prefix: String) -> Int { events.filter { $0.hasPrefix(prefix) }.count }
}

@ObservableDefaults(autoInit: false)
final class StartWindowSettings: Sendable {
    var level = 1 {
        willSet { log.append("willSet \(newValue)") }
        didSet { log.append("didSet \(level)") }
    }
    var marker = 0
    @Ignore let log: StartWindowLog

    init(suite: DefaultsSuite, prefix: String, log: StartWindowLog, ignoreExternalChanges: Bool = false) {
        self.log = log
        _userDefaults = suite
        _prefix = prefix
        _isExternalNotificationDisabled = ignoreExternalChanges
        observerStarter()
    }
}

@ObservableCloud(autoInit: false)
final class StartWindowCloudModel: Sendable {
    var level = 1 {
        willSet { log.append("willSet \(newValue)") }
        didSet { log.append("didSet \(level)") }
    }
    var marker = 0
    let log: StartWindowLog

    init(store: CloudKeyValueStore, prefix: String, log: StartWindowLog) {
        self.log = log
        _cloudStore = store
        _prefix = prefix
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

@ObservableCloud(autoInit: false)
@MainActor final class StartWindowMainActorModel {
    var level = 1 {
        willSet { log.append("willSet \(newValue)") }
        didSet { log.append("didSet \(level)") }
    }
    var marker = 0
    let log: StartWindowLog

    init(store: CloudKeyValueStore, prefix: String, log: StartWindowLog) {
        self.log = log
        _cloudStore = store
        _prefix = prefix
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

/// Holds the start-up load of `fullKey` in its window (between reading and storing) and runs `change`
/// there, for as long as the value lives.
private final class WindowChange: Sendable {
    private let installation: _StartWindow.Installation
    private let ran = Locked(0)
    /// How many loads of the key waited in the window.
    var runs: Int { ran.withLock { $0 } }

    init(fullKey: String, _ change: @escaping @Sendable () -> Void) {
        let ran = ran
        installation = _StartWindow.install(forKey: fullKey) {
            ran.withLock { $0 += 1 }
            change()
        }
    }

    deinit { installation.remove() }
}

@Suite struct DefaultsStartWindowTests {
    let directory = TemporaryDirectory()

    /// A random key prefix, so the window of one test never holds another test's load.
    let prefix = "w\(UInt32.random(in: 0 ... .max))."

    /// Another handle on the same file (in this process: the same storage, which tells observers at once)
    /// writes the key while the object's load waits between reading the old value and storing it.
    @Test func changeFromAnotherHandleInTheWindowWins() throws {
        let url = directory.file("handle.json")
        let writer = try DefaultsSuite(fileURL: url)
        writer.set(2, forKey: prefix + "level")
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") {
            writer.set(3, forKey: self.prefix + "level")
            // The change is applied before the load goes on (bounded: without an observer it never is).
            _ = eventually(timeout: .seconds(5)) { log.count("didSet") >= 1 }
        }
        let settings = StartWindowSettings(suite: try DefaultsSuite(fileURL: url), prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(settings.level == 3)
        try expectNoFurtherNotification(settings, log: log, writer: writer)
        #expect(log.events == ["willSet 3", "didSet 3"])
    }

    /// A child process writes the file while the object's load waits: the watcher applies the change.
    /// The file is watched already (someone else observes it), so the watcher takes the change in while
    /// the load waits, and nothing re-reads the file when the object registers.
    @Test func changeFromAnotherProcessInTheWindowWins() throws {
        let url = directory.file("process.json")
        let writer = try DefaultsSuite(fileURL: url)
        writer.set(2, forKey: prefix + "level")
        try writer.flush()
        let otherObserver = writer.observe(scope: .allProcesses) { _ in }
        defer { otherObserver.cancel() }
        let log = StartWindowLog()
        let key = prefix + "level"
        let window = WindowChange(fullKey: key) {
            #expect((try? TestAgent.run(["set", url.path, key, "int:3"])) == 0)
            _ = eventually { log.count("didSet") >= 1 }
        }
        let settings = StartWindowSettings(suite: try DefaultsSuite(fileURL: url), prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(settings.level == 3)
        try expectNoFurtherNotification(settings, log: log, writer: writer)
        #expect(log.events == ["willSet 3", "didSet 3"])
    }

    /// The change in the window sets the key to the declaration default, which the copy holds before the
    /// load: nothing to apply, and the load must not store the older value it read.
    @Test func changeBackToTheDeclarationDefaultInTheWindowWins() throws {
        let url = directory.file("default.json")
        let writer = try DefaultsSuite(fileURL: url)
        writer.set(2, forKey: prefix + "level")
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") {
            writer.removeObject(forKey: self.prefix + "level")
        }
        let settings = StartWindowSettings(suite: try DefaultsSuite(fileURL: url), prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(settings.level == 1)
        try expectNoFurtherNotification(settings, log: log, writer: writer)
        #expect(log.events.isEmpty, "the object never showed another value")
    }

    /// With `ignoreExternalChanges` the change in the window updates the copy silently, and the load keeps it.
    @Test func silentChangeInTheWindowWins() throws {
        let url = directory.file("silent.json")
        let writer = try DefaultsSuite(fileURL: url)
        writer.set(2, forKey: prefix + "level")
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") {
            writer.set(3, forKey: self.prefix + "level")
        }
        let settings = StartWindowSettings(
            suite: try DefaultsSuite(fileURL: url), prefix: prefix, log: log, ignoreExternalChanges: true)
        #expect(window.runs == 1)
        #expect(settings.level == 3)
        try expectNoFurtherNotification(settings, log: log, writer: writer)
        #expect(log.events.isEmpty)
    }

    /// Observers hear nothing more: a later change of another key arrives (changes are delivered in order)
    /// while `level` stays as it is and Observation hears nothing of it.
    private func expectNoFurtherNotification(
        _ settings: StartWindowSettings, log: StartWindowLog, writer: DefaultsSuite
    ) throws {
        let events = log.events
        let flag = track { _ = settings.level }
        writer.set(7, forKey: prefix + "marker")
        try writer.flush()
        #expect(eventually { settings.marker == 7 })
        #expect(!flag.fired)
        #expect(log.events == events)
    }
}

@Suite struct CloudStartWindowTests {
    let store = CloudKeyValueStore.development
    let prefix = uniqueCloudPrefix()

    /// A simulated change from another machine lands while the object's load waits between reading the old
    /// value and storing it.
    @Test func changeFromElsewhereInTheWindowWins() throws {
        try store.simulateExternalChange([prefix + "level": .integer(2)])
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") { [store, prefix] in
            try? store.simulateExternalChange([prefix + "level": .integer(3)])
            store.settle()
        }
        let model = StartWindowCloudModel(store: store, prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(model.level == 3)
        try expectNoFurtherNotification(model, log: log)
        #expect(log.events == ["willSet 3", "didSet 3"])
    }

    /// Another object's write through the same store, in the window.
    @Test func writeOfAnotherObjectInTheWindowWins() throws {
        try store.simulateExternalChange([prefix + "level": .integer(2)])
        let writer = StartWindowCloudModel(store: store, prefix: prefix, log: StartWindowLog())
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") { [store] in
            writer.level = 3
            store.settle()
        }
        let model = StartWindowCloudModel(store: store, prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(model.level == 3)
        try expectNoFurtherNotification(model, log: log)
        #expect(log.events == ["willSet 3", "didSet 3"])
    }

    /// The change in the window removes the key, so the property reads the declaration default the copy
    /// holds before the load: the load must not store the older value it read.
    @Test func changeBackToTheDeclarationDefaultInTheWindowWins() throws {
        try store.simulateExternalChange([prefix + "level": .integer(2)])
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") { [store, prefix] in
            try? store.simulateExternalChange([prefix + "level": nil])
            store.settle()
        }
        let model = StartWindowCloudModel(store: store, prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(model.level == 1)
        try expectNoFurtherNotification(model, log: log)
        #expect(log.events.isEmpty, "the object never showed another value")
    }

    /// A main-actor object starting on the main actor: the change in the window is queued for the main
    /// actor, so the load stores the value it read and the change follows it, told once.
    @MainActor @Test func mainActorObjectTakesTheChangeAfterStartingOnce() async throws {
        try store.simulateExternalChange([prefix + "level": .integer(2)])
        let log = StartWindowLog()
        let window = WindowChange(fullKey: prefix + "level") { [store, prefix] in
            try? store.simulateExternalChange([prefix + "level": .integer(3)])
            store.settle()
        }
        let model = StartWindowMainActorModel(store: store, prefix: prefix, log: log)
        #expect(window.runs == 1)
        #expect(await eventually { model.level == 3 })
        let flag = track { _ = model.level }
        try store.simulateExternalChange([prefix + "marker": .integer(7)])
        #expect(await eventually { model.marker == 7 })
        #expect(model.level == 3)
        #expect(!flag.fired)
        #expect(log.events == ["willSet 3", "didSet 3"])
    }

    /// Observers hear nothing more: a later change of another key has been delivered (in order) while
    /// `level` stays as it is and Observation hears nothing of it.
    private func expectNoFurtherNotification(_ model: StartWindowCloudModel, log: StartWindowLog) throws {
        let events = log.events
        let level = model.level
        let flag = track { _ = model.level }
        try store.simulateExternalChange([prefix + "marker": .integer(7)])
        store.settle()
        #expect(model.marker == 7)
        #expect(model.level == level)
        #expect(!flag.fired)
        #expect(log.events == events)
    }
}
