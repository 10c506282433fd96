@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

@Suite struct StorageResolutionTests {
    @Test func valuesAreStoredByTheirRule() throws {
        let suite = try makeSuite()
        let model = StorageModel(userDefaults: suite)
        model.theme = .dark  // RawRepresentable & Codable: raw value
        model.themeOptional = nil  // Optional nil: key removed
        model.profile = Profile(name: "p", retries: 2)  // Codable only: natural structure
        model.profileOptional = Profile(name: "o", retries: 1)
        model.wrapped = Wrapped(rawValue: "raw")  // RawRepresentable & plist & Codable: raw value
        model.strings = ["x", "y"]
        model.dictionary = ["k": 2]
        model.optionalInt = nil
        #expect(suite.storedValue(forKey: "theme") == .string("dark"))
        #expect(suite.storedValue(forKey: "themeOptional") == nil)
        #expect(suite.storedValue(forKey: "profile") == .dictionary(["name": .string("p"), "retries": .integer(2)]))
        #expect(
            suite.storedValue(forKey: "profileOptional") == .dictionary(["name": .string("o"), "retries": .integer(1)]))
        #expect(suite.storedValue(forKey: "wrapped") == .string("raw"))
        #expect(suite.storedValue(forKey: "strings") == .array([.string("x"), .string("y")]))
        #expect(suite.storedValue(forKey: "dictionary") == .dictionary(["k": .integer(2)]))
        #expect(suite.storedValue(forKey: "optionalInt") == nil)
    }

    @Test func valuesAreReadByTheirRule() throws {
        let suite = try makeSuite()
        suite.set(.string("light"), forKey: "theme")
        suite.set(.dictionary(["name": .string("n"), "retries": .integer(9)]), forKey: "profile")
        suite.set(.dictionary(["wrapped": .string("plist form")]), forKey: "wrapped")  // hybrid read fallback
        suite.set(.integer(7), forKey: "optionalInt")
        let model = StorageModel(userDefaults: suite)
        #expect(model.theme == .light)
        #expect(model.profile == Profile(name: "n", retries: 9))
        #expect(model.wrapped == Wrapped(rawValue: "plist form"))
        #expect(model.optionalInt == 7)
        #expect(model.themeOptional == .light)  // declaration default
    }

    @Test func optionalWithoutInitializerDefaultsToNil() throws {
        let suite = try makeSuite()
        let model = StorageModel(userDefaults: suite)
        #expect(model.optionalWithoutInitializer == nil)
        model.optionalWithoutInitializer = "set"
        #expect(suite.storedValue(forKey: "optionalWithoutInitializer") == .string("set"))
        model.optionalWithoutInitializer = nil
        #expect(suite.storedValue(forKey: "optionalWithoutInitializer") == nil)
        #expect(StorageModel(userDefaults: suite).optionalWithoutInitializer == nil)
    }

    @Test func codableReadsTheAppleLibraryForm() throws {
        let suite = try makeSuite()
        let json = try JSONEncoder().encode(Profile(name: "apple", retries: 4))
        suite.set(.data(json), forKey: "profile")
        suite.set(.string(json.base64EncodedString()), forKey: "profileOptional")
        let model = StorageModel(userDefaults: suite)
        #expect(model.profile == Profile(name: "apple", retries: 4))
        #expect(model.profileOptional == Profile(name: "apple", retries: 4))
    }

    @Test func wrongTypedValueFallsBackToTheDefault() async throws {
        let suite = try makeSuite()
        suite.set(.string("not a number"), forKey: "optionalInt")
        suite.set(.integer(3), forKey: "theme")
        let model = StorageModel(userDefaults: suite)
        #expect(model.optionalInt == 5)
        #expect(model.theme == .system)
        writeOutside(suite, ["theme": .string("dark")])
        #expect(await eventually { model.theme == .dark })
    }
}

/// A hand edit with a value of the wrong type: a running object keeps its last good value, a new object
/// uses the fallback, and the error says where and what.
@Suite struct WrongTypedEditTests {
    @Test func runningObjectKeepsTheLastGoodValueAndTheErrorSaysWhere() async throws {
        let suite = try makeSuite()
        let errors = EventLog()
        let observation = suite.observeErrors { errors.append($0.description) }
        defer { observation.cancel() }
        let model = DaemonSettings(userDefaults: suite)
        model.level = .dark
        model.count = 4
        let levelFlag = track { _ = model.level }
        let countFlag = track { _ = model.count }
        let marker = OutsideMarker(suite)
        // Written by hand: the members on lines of their own, so the positions are known.
        let text = """
            {
              "daemon.count": "many",
              "daemon.level": "verbose"
            }
            """
        let temporary = suite.fileURL.deletingLastPathComponent().appendingPathComponent(
            ".hand-edit-\(UUID().uuidString)")
        try Data(text.utf8).write(to: temporary)
        #expect(rename(temporary.path, suite.fileURL.path) == 0)
        #expect(await marker.settle())
        #expect(model.level == .dark)
        #expect(model.count == 4)
        #expect(!levelFlag.fired)
        #expect(!countFlag.fired)
        let path = suite.fileURL.path
        #expect(
            errors.events.contains(
                "\(path):3:19: error: key 'daemon.level': 'verbose' is not a case of LogLevel: light, dark, system; keeping the current value"
            ))
        #expect(
            errors.events.contains(
                "\(path):2:19: error: key 'daemon.count': \"many\" is not an Int; keeping the current value"))
        let fresh = DaemonSettings(userDefaults: suite)
        #expect(fresh.level == .system)
        #expect(fresh.count == 1)
        writeOutside(suite, ["daemon.level": .string("light")])
        #expect(await eventually { model.level == .light })
    }

    /// A Codable value whose member does not fit: the error names the member's path, what it expects and
    /// what it found, at the member's line and column (as deep as objects go; an array element at its array).
    @Test func aMemberOfACodableValueThatDoesNotFitIsNamedAtItsPosition() async throws {
        let suite = try makeSuite()
        let errors = EventLog()
        let observation = suite.observeErrors { errors.append($0.description) }
        defer { observation.cancel() }
        let model = ServiceSettings(userDefaults: suite)
        let kept = Limits(cpu: 2, memory: 512)
        model.limits = kept
        let path = suite.fileURL.path
        let edits = [
            (
                """
                {
                  "svc.limits": {
                    "cpu": "lots",
                    "memory": 512
                  }
                }
                """,
                "\(path):3:12: error: key 'svc.limits': 'cpu' expects a number, found the string \"lots\"; keeping the current value"
            ),
            (
                """
                {
                  "svc.limits": {"cpu": 1.5}
                }
                """,
                "\(path):2:17: error: key 'svc.limits': the field 'memory' is missing; keeping the current value"
            ),
            (
                """
                {
                  "svc.limits": {
                    "cpu": 1,
                    "memory": 1,
                    "servers": [{"port": 1}, {"port": "x"}]
                  }
                }
                """,
                "\(path):5:16: error: key 'svc.limits': 'servers[1].port' expects an integer, found the string \"x\"; keeping the current value"
            )
        ]
        // No marker write between the edits: it would rewrite the file in the library's layout, and an error
        // found in that version would rightly point at other lines.
        for (text, expected) in edits {
            let temporary = suite.fileURL.deletingLastPathComponent().appendingPathComponent(
                ".hand-edit-\(UUID().uuidString)")
            try Data(text.utf8).write(to: temporary)
            #expect(rename(temporary.path, suite.fileURL.path) == 0)
            #expect(await eventually { errors.events.contains(expected) }, "\(errors.events)")
            #expect(model.limits == kept)
        }
    }

    /// The README's way for an object to reach its suite's error channel: open the suite by the same name
    /// (every handle on one file shares the channel).
    @Test func objectOpenedByTheMacrosSuiteNameReportsOnThatSuite() async throws {
        let settings = Settings()  // `suiteName: "macro-tests.settings"` in the macro
        let suite = try DefaultsSuite(name: "macro-tests.settings")
        let errors = EventLog()
        let observation = suite.observeErrors { errors.append($0.description) }
        defer { observation.cancel() }
        settings.port = 7070
        let marker = OutsideMarker(suite)
        writeOutside(suite, ["net_port": .string("many")])
        #expect(await marker.settle())
        #expect(settings.port == 7070)
        #expect(
            errors.events.contains { $0.contains("key 'net_port': \"many\" is not an Int; keeping the current value") },
            "\(errors.events)")
        #expect(suite.lastError?.key == "net_port")
    }
}

@Suite struct DefaultFallbackTests {
    @Test func storedThenRegisteredThenDeclarationDefault() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        suite.register(defaults: ["m_b": .string("registered")])
        model.b = "stored"
        writeOutside(suite, ["m_b": nil])
        #expect(await eventually { model.b == "registered" })
        model.a = 10
        writeOutside(suite, ["m_a": nil])
        #expect(await eventually { model.a == 1 })
        let fresh = Matrix(userDefaults: suite)
        #expect(fresh.b == "registered")
        #expect(fresh.a == 1)
    }

    @Test func customInitializerDoesNotChangeTheDeclarationDefault() async throws {
        _ = testDirectory
        let suite = try DefaultsSuite(name: "macro-tests.custom")
        let user = CustomInit(suite: suite, username: "alice")
        #expect(user.username == "alice")
        #expect(suite.storedValue(forKey: "username") == .string("alice"))
        writeOutside(suite, ["username": nil])
        #expect(await eventually { user.username == "guest" })
    }

    /// Storage is initialized inline from the declaration default (no `init` accessor, which made the
    /// compiler evaluate the default a second time for the accessor and made compile time superlinear).
    @Test func declarationDefaultsAreEvaluatedOncePerObjectAndCustomInitAssignmentsWrite() async throws {
        let suite = try makeSuite()
        let before = defaultEvaluations.events.count
        let object = LoggedDefaults(suite: suite, persisted: 5)
        #expect(defaultEvaluations.events.dropFirst(before).sorted() == ["local", "persisted"])
        #expect(object.persisted == 5)
        #expect(object.local == 20)
        #expect(object.withoutDefault == 3)
        #expect(suite.storedValue(forKey: "persisted") == .integer(5))
        // The assignment did not change the captured default: without the key, the object reads it again.
        writeOutside(suite, ["persisted": nil])
        #expect(await eventually { object.persisted == 1 })
    }

    @Test func initializerArgumentsWinOverMacroArguments() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite, prefix: "other_")
        model.a = 2
        #expect(suite.storedValue(forKey: "other_a") == .integer(2))
        #expect(suite.storedValue(forKey: "m_a") == nil)
    }
}

@Suite(.serialized) struct ObserverTests {
    @Test func willSetAndDidSetRunForLocalAndOutsideChanges() async throws {
        let suite = try makeSuite()
        let model = WithObservers(userDefaults: suite)
        let marker = OutsideMarker(suite)
        let before = observerLog.events.count
        model.value = 1
        model.value = 1  // equal: no change, no observers
        writeOutside(suite, ["obs.value": .integer(5)])
        #expect(await eventually { model.value == 5 })
        #expect(await marker.settle())  // the value is stored before didSet runs: wait for the whole update
        model.named = "y"
        writeOutside(suite, ["obs.named": .string("z")])
        #expect(await eventually { model.named == "z" })
        #expect(await marker.settle())
        model.local = 2
        model.profile = Profile(name: "q", retries: 1)
        let events = Array(observerLog.events.dropFirst(before))
        #expect(
            events == [
                "willSet 0->1", "didSet 0->1", "willSet 1->5", "didSet 1->5",
                "named will y", "named did x", "named will z", "named did y", "local did 0->2", "profile did p->q"
            ])
    }
}

@Suite struct ModeTests {
    /// Upstream's rule: the value always follows the suite; only the notification is suppressed.
    @Test func ignoreExternalChangesFollowsTheSuiteWithoutNotifying() async throws {
        let suite = try makeSuite()
        let model = IgnoresExternal(userDefaults: suite)
        let other = IgnoresExternal(userDefaults: suite)
        let marker = OutsideMarker(suite)  // proves the outside changes were handled
        model.value = 1
        #expect(suite.value(forKey: "value") == .integer(1))
        var flag = track { _ = model.value }
        suite.set(.integer(3), forKey: "value")  // this process, another object's path
        #expect(model.value == 3)
        #expect(!flag.fired)
        writeOutside(suite, ["value": .integer(2)])
        #expect(await marker.settle())
        #expect(model.value == 2)
        #expect(!flag.fired)
        other.value = 4
        #expect(model.value == 4)
        #expect(!flag.fired)
        // Assigning the value the object had before the outside change is a real write, never skipped.
        suite.set(.integer(9), forKey: "value")
        model.value = 4
        #expect(suite.value(forKey: "value") == .integer(4))
        #expect(model.value == 4)
        flag = track { _ = model.value }
        model.value = 5  // own writes notify
        #expect(flag.fired)
        let overridden = Matrix(userDefaults: suite, ignoreExternalChanges: true)
        let aFlag = track { _ = overridden.a }
        writeOutside(suite, ["m_a": .integer(8)])
        #expect(await marker.settle())
        #expect(overridden.a == 8)
        #expect(!aFlag.fired)
    }

    @Test func ignoredKeyPathsFollowTheSuiteWithoutNotifying() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite, prefix: "p.", ignoredKeyPathsForExternalUpdates: [\Matrix.a])
        let aFlag = track { _ = model.a }
        let bFlag = track { _ = model.b }
        let marker = OutsideMarker(suite)
        writeOutside(suite, ["p.a": .integer(5), "p.b": .string("heard")])
        #expect(await eventually { model.b == "heard" })
        #expect(await marker.settle())  // b can be applied before a: wait until the whole change is handled
        #expect(model.a == 5)
        #expect(!aFlag.fired)
        #expect(bFlag.fired)
        suite.set(.integer(7), forKey: "p.a")
        #expect(model.a == 7)
        #expect(!aFlag.fired)
        // The old value, assigned after an outside change, is written (not skipped as equal to a stale copy).
        model.a = 1
        suite.set(.integer(2), forKey: "p.a")
        model.a = 1
        #expect(suite.value(forKey: "p.a") == .integer(1))
        model.a = 6  // own writes still work
        #expect(suite.value(forKey: "p.a") == .integer(6))
    }

    @Test func limitToInstanceTrueHearsOnlyThisProcess() async throws {
        let suite = try makeSuite()
        let model = LimitedToInstance(userDefaults: suite)
        let other = LimitedToInstance(userDefaults: suite)
        let marker = OutsideMarker(suite)  // hears outside changes (and gets the file watched)
        other.value = 4
        #expect(await eventually { model.value == 4 })
        writeOutside(suite, ["value": .integer(9)])
        #expect(await marker.settle())
        #expect(suite.value(forKey: "value") == .integer(9))  // the suite did read it
        #expect(model.value == 4)
    }

    @Test func limitToInstanceFalseHearsOutsideChanges() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        writeOutside(suite, ["m_a": .integer(9)])
        #expect(await eventually { model.a == 9 })
    }

    @Test func observeFirstStoresOnlyDefaultsBacked() throws {
        let suite = try makeSuite()
        let model = ObserveFirst(userDefaults: suite)
        let flag = track { _ = model.notStored }
        model.notStored = 5
        model.stored = 6
        model.keyed = "v"
        #expect(flag.fired)
        #expect(suite.value(forKey: "notStored") == nil)
        #expect(suite.value(forKey: "stored") == .integer(6))
        #expect(suite.value(forKey: "custom") == .string("v"))
    }

    @Test func severalObjectsOnOneSuite() async throws {
        let suite = try makeSuite()
        let models = (0..<5).map { _ in Matrix(userDefaults: suite) }
        models[0].b = "shared"
        #expect(await eventually { models.allSatisfy { $0.b == "shared" } })
        writeOutside(suite, ["m_a": .integer(77)])
        #expect(await eventually { models.allSatisfy { $0.a == 77 } })
    }

    @Test func releasedObjectsWhileChangesArrive() async throws {
        let suite = try makeSuite()
        weak var weakModel: Matrix?
        let writer = Task.detached {
            for index in 0..<200 { writeOutside(suite, ["m_a": .integer(index)]) }
        }
        for _ in 0..<50 {
            var model: Matrix? = Matrix(userDefaults: suite)
            weakModel = model
            _ = model?.a
            model = nil
            #expect(weakModel == nil)
        }
        await writer.value
        let survivor = Matrix(userDefaults: suite)
        writeOutside(suite, ["m_a": .integer(1000)])
        #expect(await eventually { survivor.a == 1000 })
    }

    @Test func sendableObjectsAcrossTasks() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask { for step in 0..<10 { model.a = index * 100 + step; _ = model.b } }
            }
        }
        #expect(suite.value(forKey: "m_a").flatMap(Int.init(defaultsValue:)) == model.a)
    }
}

@Suite struct MainActorTests {
    @MainActor @Test func outsideChangesArriveOnTheMainActor() async throws {
        let suite = try makeSuite()
        let model = MainActorModel(userDefaults: suite)
        let flag = track { _ = model.value }
        Task.detached { writeOutside(suite, ["value": .integer(3)]) }
        #expect(await eventually { model.value == 3 })
        #expect(flag.fired)
    }

    @MainActor @Test func defaultIsolationIsMainActor() async throws {
        let suite = try makeSuite()
        let model = DefaultIsolationModel(userDefaults: suite)
        model.value = 1
        Task.detached { writeOutside(suite, ["value": .integer(2)]) }
        #expect(await eventually { model.value == 2 })
        #expect(model.changes == [1, 2])
        #expect(model.onMainThread == [true, true])
    }
}

@Suite struct CrossProcessTests {
    /// The helper executable built with the tests (`defaults-test-agent`).
    static var agent: URL { PluginDiagnosticsTests.buildDirectory.appendingPathComponent("defaults-test-agent") }

    func runAgent(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = Self.agent
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func anotherProcessWritingAKeyUpdatesOnlyThatProperty() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        model.b = "mine"  // creates the file
        let aFlag = track { _ = model.a }
        let bFlag = track { _ = model.b }
        let cFlag = track { _ = model.c }
        let marker = OutsideMarker(suite)
        try runAgent(["set", suite.fileURL.path, "m_a", "int:41"])
        #expect(await eventually { model.a == 41 })
        #expect(aFlag.fired)
        #expect(
            try await marker.settle { key, value in try runAgent(["set", suite.fileURL.path, key, "int:\(value)"]) })
        #expect(!bFlag.fired && !cFlag.fired)
        #expect(model.b == "mine")
    }
}
