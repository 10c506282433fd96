@testable import ObservableDefaults
import Foundation
import Testing

/// The README's way to update an `@ObservableDefaults` property atomically: `update(forKey:_:)` on the
/// class's suite with the property's full key; the object hears the change and its property follows.
@Suite struct AtomicUpdateFromObjectTests {
    @Test func updatingThePropertysKeyInTheSuiteUpdatesTheObject() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        model.a = 5
        let stored = try suite.update(Int.self, forKey: "m_a") { ($0 ?? 0) + 1 }
        #expect(stored == 6)
        #expect(model.a == 6)
        #expect(try suite.format.decode(Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)["m_a"] == .integer(6))
    }
}
