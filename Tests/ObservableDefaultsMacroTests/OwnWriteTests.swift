@testable import ObservableDefaults
import Foundation
import Synchronization
import Testing

/// How many times a ``DecodeCounted`` value was decoded (only `OwnWriteTests` uses the type).
let decodeCountedDecodes = Atomic(0)

/// A Codable-only value (stored as its structure) that counts its decodes: a property of this type decodes
/// only when it takes a value from the suite, so the count shows whether a write came back to its object.
struct DecodeCounted: Codable, Equatable, Sendable {
    var number: Int

    init(number: Int) { self.number = number }

    init(from decoder: any Decoder) throws {
        decodeCountedDecodes.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        number = try container.decode(Int.self, forKey: .number)
    }
}

@ObservableDefaults(prefix: "own.")
final class OwnWriteModel: Sendable {
    var counted = DecodeCounted(number: 0)
    var plain = 0
}

/// Two properties mapped to one key: a write of either is the other's new value too. The macro warns
/// about two equal keys, but does not compare the keys of members inside `#if` (whether both exist depends
/// on the condition), which keeps the test build free of warnings.
@ObservableDefaults(prefix: "shared.")
final class SharedKeyModel: Sendable {
    @DefaultsKey(userDefaultsKey: "value") var first = 0
    #if true
        @DefaultsKey(userDefaultsKey: "value") var second = 0
    #endif
}

@Suite struct OwnWriteTests {
    /// An object's write changes its copy itself; announcing it back to the object's own suite observer
    /// made the object resolve (decode) the key again and compare, the larger part of a write's cost.
    /// Observers hear each write exactly once, the object's own and another object's on the same suite.
    @Test func anObjectsOwnWriteDoesNotComeBackToIt() throws {
        let suite = try makeSuite()
        let model = OwnWriteModel(userDefaults: suite)
        let other = OwnWriteModel(userDefaults: suite)
        let ownNotifications = MutationCounter { _ = model.counted }
        let otherNotifications = MutationCounter { _ = other.counted }
        let writes = 50
        let before = decodeCountedDecodes.load(ordering: .relaxed)
        suite.performBatchUpdates {
            for number in 1...writes { model.counted = DecodeCounted(number: number) }
        }
        let decodes = decodeCountedDecodes.load(ordering: .relaxed) - before
        // The other object takes each value from the suite (one decode per write); the writer none.
        #expect(decodes == writes)
        #expect(ownNotifications.count == writes)
        #expect(otherNotifications.count == writes)
        #expect(model.counted.number == writes && other.counted.number == writes)
        #expect(suite.storedValue(forKey: "own.counted") == .dictionary(["number": .integer(writes)]))
    }

    /// A write of one property reaches the other property mapped to the same key, which notifies once.
    @Test func propertiesSharingAKeyFollowEachOthersWrites() throws {
        let suite = try makeSuite()
        let model = SharedKeyModel(userDefaults: suite)
        let firstNotifications = MutationCounter { _ = model.first }
        let secondNotifications = MutationCounter { _ = model.second }
        model.first = 5
        #expect(model.second == 5)
        #expect(firstNotifications.count == 1 && secondNotifications.count == 1)
        model.second = 7
        #expect(model.first == 7)
        #expect(firstNotifications.count == 2 && secondNotifications.count == 2)
        #expect(suite.storedValue(forKey: "shared.value") == .integer(7))
    }

    /// Writes through the object racing writes of the same key through the suite (each announced to the
    /// object, which applies it): after every round the property equals what the suite holds.
    @Test func racingWritesLeaveThePropertyEqualToTheSuite() throws {
        let suite = try makeSuite()
        let model = OwnWriteModel(userDefaults: suite)
        var mismatches: [String] = []
        suite.performBatchUpdates {
            for round in 0..<2_000 {
                DispatchQueue.concurrentPerform(iterations: 2) { thread in
                    if thread == 0 {
                        model.plain = 2 * round
                    } else {
                        suite.set(2 * round + 1, forKey: "own.plain")
                    }
                }
                let stored = suite.integer(forKey: "own.plain")
                if model.plain != stored {
                    mismatches.append("round \(round): property \(model.plain), suite \(stored)")
                }
            }
        }
        #expect(mismatches == [])
    }

    /// A write of the value the property already holds races a write of another value through the suite:
    /// the suite's write can reach memory, and the object's apply the copy, between the setter's comparison
    /// with its copy (equal: nothing to change) and its write of memory. The copy must still end equal to
    /// memory, and a copy that moved must have been announced.
    @Test func writingTheCurrentValueWhileTheSuiteChangesItLeavesThePropertyEqualToTheSuite() throws {
        let suite = try makeSuite()
        let model = OwnWriteModel(userDefaults: suite)
        let notifications = MutationCounter { _ = model.plain }
        var mismatches: [String] = []
        suite.performBatchUpdates {
            for round in 0..<20_000 {
                model.plain = 2 * round
                let before = notifications.count
                DispatchQueue.concurrentPerform(iterations: 2) { thread in
                    if thread == 0 {
                        model.plain = 2 * round
                    } else {
                        suite.set(2 * round + 1, forKey: "own.plain")
                    }
                }
                let stored = suite.integer(forKey: "own.plain")
                if model.plain != stored {
                    mismatches.append("round \(round): property \(model.plain), suite \(stored)")
                }
                // A copy that moved was announced (exact counts are left to the single-threaded tests: two
                // announcements from two threads can fall between a notification and Observation's re-arming).
                if model.plain != 2 * round && notifications.count == before {
                    mismatches.append("round \(round): the property moved to \(model.plain) unannounced")
                }
            }
        }
        #expect(mismatches == [])
    }
}
