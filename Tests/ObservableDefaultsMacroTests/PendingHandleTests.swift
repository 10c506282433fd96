import Foundation
import Testing
@testable import ObservableDefaults

/// A property keeps where its key's pending change sits in the suite's memory (`PendingHandle`). When its
/// change lands the positions move, and another key's change may sit at the one it kept: its next write must
/// still go to its own key (in memory, to observers and in the file), never to the other's.
@Suite struct PendingHandleTests {
    @Test func aWriteAfterItsChangeLandedGoesToItsOwnKey() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        suite.performBatchUpdates {
            model.a = 2  // m_a's change is the first pending one: the property keeps its position
            model.a = 3  // through the handle
        }
        #expect(!suite.hasPendingChanges)
        let heard = Locked<[Set<String>]>([])
        let token = suite.observe(keys: ["other", "m_a"]) { change in heard.withLock { $0.append(change.keys) } }
        defer { token.cancel() }
        suite.performBatchUpdates {
            suite.set(7, forKey: "other")  // now the first pending change, at the position m_a's handle holds
            model.a = 4
            model.b = "x"
        }
        #expect(suite.value(forKey: "other") == .integer(7))
        #expect(suite.value(forKey: "m_a") == .integer(4))
        #expect(suite.value(forKey: "m_b") == .string("x"))
        #expect(model.a == 4)
        let onDisk = try suite.format.decode(Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)
        #expect(onDisk["other"] == .integer(7) && onDisk["m_a"] == .integer(4) && onDisk["m_b"] == .string("x"))
        #expect(heard.withLock { $0 } == [["other"], ["m_a"]])
    }
}
