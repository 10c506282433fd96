@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

// The generated `performBatchUpdates(_:)` of an `@ObservableDefaults` object: the suite's batch, as the
// cloud family's objects have the store's.

@ObservableDefaults
final class BatchSettings {
    var host = "localhost"
    var port = 80
}

@Suite struct BatchFromObjectTests {
    /// What the suite's file holds now (empty when there is no file yet).
    private func onDisk(_ suite: DefaultsSuite) throws -> [String: DefaultsValue] {
        guard let bytes = FileManager.default.contents(atPath: suite.fileURL.path) else { return [:] }
        return try suite.format.decode(bytes, fileURL: suite.fileURL).stringKeyed
    }

    @Test func anObjectsBatchReachesTheFileInOneWriteAndObserversAtOnce() throws {
        let suite = try makeSuite()
        let settings = BatchSettings(userDefaults: suite)
        let port = track { _ = settings.port }
        let heard = Locked<[Set<String>]>([])
        let observation = suite.observe(scope: .thisProcess) { change in heard.withLock { $0.append(change.keys) } }
        defer { observation.cancel() }
        let result = try settings.performBatchUpdates { () throws -> Int in
            settings.host = "db.internal"
            settings.port = 5432
            #expect(port.count == 1 && settings.port == 5432)
            #expect(try onDisk(suite)["host"] == nil && suite.hasPendingChanges)
            return 7
        }
        #expect(result == 7)
        #expect(try onDisk(suite) == ["host": .string("db.internal"), "port": .integer(5432)])
        #expect(!suite.hasPendingChanges)
        #expect(heard.withLock { $0 } == [["host"], ["port"]])
    }
}
