@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

/// A value the suite's format cannot store (here NaN and infinity in a JSON suite) is refused by the
/// suite; the object must refuse it too, so the property never disagrees with the file.
@Suite struct RefusedValueTests {
    @Test func valueTheSuiteRefusesLeavesThePropertyAndTheFileAlone() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        model.d = 1.5
        #expect(suite.double(forKey: "m_d") == 1.5)

        let notified = track { _ = model.d }
        let fileBefore = try Data(contentsOf: suite.fileURL)
        for refused in [Double.nan, .infinity, -.infinity] {
            model.d = refused
            #expect(model.d == 1.5, "the property took a value the suite refused: \(String(describing: model.d))")
            #expect(suite.lastError?.key == "m_d")
        }
        #expect(!notified.fired, "observers heard of a value that was refused")
        #expect(try Data(contentsOf: suite.fileURL) == fileBefore)
        #expect(Matrix(userDefaults: suite).d == 1.5)
    }
}
