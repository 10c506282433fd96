import Foundation
import Testing
@testable import ObservableDefaults

/// The rules by which a store takes in the local copy of another process running it
/// (`CloudState.takeIn(sibling:adoptingWrites:)`).
@Suite struct CloudSiblingMergeTests {
    private static let account = CloudAccount(clusterID: "c", namespace: "n", user: "")

    /// A state of `account` whose keys hold `server` values at the given revisions.
    private func serverState(_ server: [String: (DefaultsValue, Int64)]) -> CloudState {
        var state = CloudState()
        state.account = Self.account
        for (key, (value, revision)) in server {
            state.setValue(value, forKey: key)
            state.serverRevisions[key] = revision
            state.knownRevisions[key] = revision
        }
        return state
    }

    /// `state` with a local write of `key` made at `time`, based on `base`.
    private func writing(_ state: CloudState, _ key: String, _ value: DefaultsValue, base: Int64, at time: Int64)
        -> CloudState
    {
        var state = state
        state.setValue(value, forKey: key)
        state.pending[key] = PendingWrite(value: value, baseRevision: base, generation: state.nextGeneration)
        state.nextGeneration += 1
        state.writeTimes[key] = time
        return state
    }

    @Test func anEndedProcesssUnsentWritesAreAdoptedWhenNewer() {
        let base = serverState(["k": (.integer(1), 5), "other": (.integer(1), 6)])
        var mine = writing(base, "k", .integer(2), base: 5, at: 100)
        let theirs = writing(writing(base, "k", .integer(3), base: 5, at: 200), "new", .string("x"), base: 0, at: 150)
        let outcome = mine.takeIn(sibling: theirs, adoptingWrites: true)
        #expect(outcome.restoredWrites)
        #expect(outcome.changed == ["k", "new"])
        #expect(
            mine.values["k"] == .integer(3) && mine.pending["k"]?.value == .integer(3)
                && mine.pending["k"]?.baseRevision == 5)
        #expect(mine.writeTimes["k"] == 200)
        #expect(mine.pending["new"]?.value == .string("x"))
    }

    @Test func anOlderWriteOfTheSameKeyLoses() {
        let base = serverState(["k": (.integer(1), 5)])
        var mine = writing(base, "k", .integer(2), base: 5, at: 300)
        let outcome = mine.takeIn(sibling: writing(base, "k", .integer(3), base: 5, at: 200), adoptingWrites: true)
        #expect(outcome == LateCopyOutcome())
        #expect(mine.pending["k"]?.value == .integer(2))
    }

    @Test func aWriteTheServerMovedPastIsDropped() {
        // This process heard the key at revision 9 since the other's write, based on 5, was made.
        var mine = serverState(["k": (.integer(7), 9)])
        let theirs = writing(serverState(["k": (.integer(1), 5)]), "k", .integer(3), base: 5, at: 200)
        #expect(!mine.takeIn(sibling: theirs, adoptingWrites: true).restoredWrites)
        #expect(mine.values["k"] == .integer(7) && mine.pending["k"] == nil)
    }

    @Test func aLiveProcesssWritesAreLeftToItButItsServerKnowledgeIsTaken() {
        var mine = serverState(["k": (.integer(1), 5)])
        let theirs = writing(
            serverState(["k": (.integer(4), 8), "j": (.integer(1), 3)]), "w", .integer(9), base: 0, at: 100)
        let outcome = mine.takeIn(sibling: theirs, adoptingWrites: false)
        #expect(outcome.changed == ["k", "j"])
        #expect(mine.values["k"] == .integer(4) && mine.serverRevisions["k"] == 8)
        #expect(mine.values["w"] == nil && mine.pending.isEmpty)
    }

    @Test func aCopyOfAnotherAccountBringsNothingAndItsWritesAreDropped() {
        var mine = serverState(["k": (.integer(1), 5)])
        var theirs = writing(serverState([:]), "w", .integer(9), base: 0, at: 100)
        theirs.account = CloudAccount(clusterID: "other", namespace: "n", user: "")
        let outcome = mine.takeIn(sibling: theirs, adoptingWrites: true)
        #expect(outcome.dropped == ["w"])
        #expect(mine.values == ["k": .integer(1)])
    }

    @Test func localOnlyValuesFollowTheLaterWrite() {
        var mine = CloudState()
        mine.setValue(.string("mine"), forKey: "a")
        mine.writeTimes["a"] = 100
        mine.setValue(.string("mine"), forKey: "b")
        mine.writeTimes["b"] = 300
        var theirs = CloudState()
        for key in ["a", "b", "c"] {
            theirs.setValue(.string("theirs"), forKey: key)
            theirs.writeTimes[key] = 200
        }
        theirs.setValue(nil, forKey: "a")  // removed at 200, after this state's write
        _ = mine.takeIn(sibling: theirs, adoptingWrites: true)
        #expect(mine.values == ["b": .string("mine"), "c": .string("theirs")])
    }

    @Test func writeTimesSurviveWholeSavesAndJournalRecords() throws {
        var state = writing(serverState(["k": (.integer(1), 5)]), "k", .integer(2), base: 5, at: 1_234_567_890_123)
        let decoded = try CloudLocalCopy.decode(CloudLocalCopy.encode(state))
        #expect(decoded.writeTimes == ["k": 1_234_567_890_123])
        state.writeTimes["k"] = 42
        let entries = try CloudLocalCopyJournal.entries(
            in: CloudLocalCopyJournal.content(of: ["k"], in: state), fileURL: URL(fileURLWithPath: "/x"))
        var replayed = CloudState()
        CloudLocalCopyJournal.apply(entries, to: &replayed)
        #expect(replayed.writeTimes == ["k": 42])
    }
}
