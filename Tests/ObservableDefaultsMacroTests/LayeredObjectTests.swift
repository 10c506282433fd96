@testable import ObservableDefaults
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import Testing
import TestSupport

/// `@ObservableDefaults` objects read through the standard layers with no source change: a system file
/// (under `$XDG_CONFIG_DIRS`, which `TestEnvironment` points at a temporary directory) is followed live, and
/// a forced key keeps its managed value.
@Suite struct LayeredObjectTests {
    /// A layer file of `suite` in `directory`, rewritten as an editor does with the values given so far.
    final class LayerFileEditor: Sendable {
        let url: URL
        private let values = Mutex<[String: DefaultsValue]>([:])

        init(_ suite: DefaultsSuite, in directory: URL) {
            try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            url = directory.appendingPathComponent(suite.name + ".json")
        }

        func set(_ changes: [String: DefaultsValue]) {
            let all = values.withLock { values in
                values.merge(changes) { _, new in new }
                return values
            }
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".edit-\(UUID().uuidString)")
            try! SuiteFormat.json.encodeSuite(all).write(to: temporary)
            precondition(rename(temporary.path, url.path) == 0)
        }

        deinit { try? FileManager.default.removeItem(at: url) }
    }

    @Test func anObjectFollowsASystemFileLive() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let system = LayerFileEditor(suite, in: LayerPlaces.current().systemDirectories[0])
        let marker = OutsideMarker(suite, key: "m_marker")

        let a = track { _ = model.a }
        let b = track { _ = model.b }
        system.set(["m_a": .integer(42)])
        #expect(await eventually { a.fired })
        #expect(model.a == 42)
        #expect(suite.origin(forKey: "m_a") == .system(system.url))
        #expect(await marker.settle { key, value in system.set([key: .integer(value)]) })
        #expect(!b.fired, "a system change of m_a notified b")

        // The object's own write goes to the file, which is above the system file: later system edits are
        // hidden from the property.
        model.a = 5
        #expect(suite.storedValue(forKey: "m_a") == .integer(5))
        let hidden = track { _ = model.a }
        system.set(["m_a": .integer(43)])
        #expect(await marker.settle { key, value in system.set([key: .integer(value)]) })
        #expect(!hidden.fired, "a system edit under the file's value notified the property")
        #expect(model.a == 5)

        // Assigning the declaration default of an optional removes the key from the file: the system value
        // shows through.
        system.set(["m_d": .double(2.5)])
        #expect(await eventually { model.d == 2.5 })
        model.d = 1.5
        #expect(model.d == 1.5)
        model.d = nil
        #expect(model.d == 2.5, "a removed key reads the system file's value")
        #expect(suite.storedValue(forKey: "m_d") == nil)
    }

    @Test func aForcedKeyKeepsItsManagedValueAndTheWriteIsReported() async throws {
        let suite = try makeSuite()
        let managed = LayerFileEditor(suite, in: LayerPlaces.current().managedDirectory)
        managed.set(["m_b": .string("admin")])
        suite.reload()
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        let model = Matrix(userDefaults: suite)
        #expect(model.b == "admin")

        let b = track { _ = model.b }
        model.b = "mine"
        #expect(model.b == "admin")
        #expect(!b.fired, "a refused write notified Observation")
        #expect(suite.storedValue(forKey: "m_b") == nil)
        #expect(errors.items.map(\.kind) == [.forcedKey])
        #expect(errors.items.first?.key == "m_b")

        // The administrator lifts the lock: the property follows, and is writable again.
        let lifted = track { _ = model.b }
        try FileManager.default.removeItem(at: managed.url)
        #expect(await eventually { lifted.fired })
        #expect(model.b == "b")
        model.b = "mine"
        #expect(suite.storedValue(forKey: "m_b") == .string("mine"))
    }
}
