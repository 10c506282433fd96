import Foundation
import Testing
@testable import ObservableDefaults

/// ``CloudState/takeInLateCopy(_:)``: a local copy read only after its store started
/// without it. The result must be what a start that had read the copy would hold now.
@Suite struct CloudLateCopyTests {
    private let account = CloudAccount(clusterID: "c1", namespace: "ns", user: "")

    /// A copy as a store saves it: values with their server revisions, unsent writes on top.
    private func copy(
        values: [String: DefaultsValue], revisions: [String: Int64], pending: [String: (DefaultsValue?, Int64)] = [:],
        account: CloudAccount? = nil
    ) -> CloudState {
        var state = CloudState()
        for (key, value) in values { state.setValue(value, forKey: key) }
        state.serverRevisions = revisions
        state.knownRevisions = revisions
        for (key, (value, base)) in pending.sorted(by: { $0.key < $1.key }) {
            state.setValue(value, forKey: key)
            state.pending[key] = PendingWrite(value: value, baseRevision: base, generation: state.nextGeneration)
            state.nextGeneration += 1
        }
        state.account = account
        return state
    }

    /// A store that never syncs (local-only): what this process wrote or removed since start stays; every
    /// other value of the copy comes back, announced.
    @Test func writesSinceStartWinAndTheRestOfTheCopyComesBack() {
        var memory = CloudState()
        memory.localCopyUnread = true
        memory.setValue(.string("mine"), forKey: "b")  // written since start; "gone" removed (memory never had it)
        memory.writtenBeforeCopyRead = ["b", "gone"]
        let old = copy(
            values: ["a": .string("from copy"), "b": .string("old b"), "gone": .string("old")], revisions: [:])
        let outcome = memory.takeInLateCopy(old)
        #expect(outcome == LateCopyOutcome(changed: ["a"], restoredWrites: false, dropped: []))
        #expect(memory.values == ["a": .string("from copy"), "b": .string("mine")])
        #expect(!memory.localCopyUnread && memory.writtenBeforeCopyRead.isEmpty)
    }

    /// Before the server is reached: the copy's account, revisions and unsent writes are taken as a start
    /// would have loaded them, and a write made since start is based on the revision the copy knew.
    @Test func beforeTheServerIsReachedTheCopyIsTakenAsAtStart() {
        var memory = CloudState()
        memory.localCopyUnread = true
        memory.setValue(.string("new"), forKey: "w")
        memory.pending["w"] = PendingWrite(value: .string("new"), baseRevision: 0, generation: 1)
        // a removal of a key memory never had
        memory.pending["r"] = PendingWrite(value: nil, baseRevision: 0, generation: 2)
        memory.nextGeneration = 3
        let old = copy(
            values: ["kept": .integer(1), "w": .string("old"), "r": .string("old")],
            revisions: ["kept": 5, "w": 7, "r": 8],
            pending: ["p": (.string("offline"), 0), "r": (.string("older offline"), 8)], account: account)
        memory.writtenBeforeCopyRead = ["w", "r"]
        let outcome = memory.takeInLateCopy(old)
        #expect(outcome.changed == ["kept", "p"])
        #expect(outcome.restoredWrites)
        #expect(memory.account == account)
        #expect(memory.values == ["kept": .integer(1), "w": .string("new"), "p": .string("offline")])
        #expect(memory.serverRevisions == ["kept": 5, "w": 7, "r": 8])
        #expect(memory.pending["p"]?.baseRevision == 0)
        #expect(memory.pending["p"]?.generation == 3)
        #expect(memory.pending["w"]?.baseRevision == 7, "rebased on the copy's revision")
        #expect(memory.pending["r"]?.baseRevision == 8, "rebased on the copy's own unsent write's base")
        #expect(memory.pending["r"]?.value == nil)
    }

    /// After the whole namespace was read: the server's values are newer than the copy's; an unsent write
    /// of the copy comes back only where the server did not change the key since its base.
    @Test func afterTheNamespaceWasReadTheServerWinsExceptForUnchangedKeys() {
        var memory = CloudState()
        memory.localCopyUnread = true
        memory.account = account
        _ = memory.applySnapshot(["kept": (.integer(2), 6, nil), "q": (.string("server q"), 4, nil)], at: 9)
        let old = copy(
            values: ["kept": .integer(1), "deleted": .string("old")], revisions: ["kept": 5, "deleted": 2],
            pending: ["p": (.string("offline"), 0), "q": (.string("offline q"), 3)], account: account)
        let outcome = memory.takeInLateCopy(old)
        #expect(outcome.changed == ["p"])
        #expect(outcome.restoredWrites)
        #expect(memory.values == ["kept": .integer(2), "q": .string("server q"), "p": .string("offline")])
        #expect(Set(memory.pending.keys) == ["p"])
        #expect(memory.serverRevisions == ["kept": 6, "q": 4])
    }

    /// A copy of another account than the server's brings nothing; its unsent writes are named as dropped.
    @Test func aCopyOfAnotherAccountBringsNothing() {
        var memory = CloudState()
        memory.localCopyUnread = true
        memory.account = account
        _ = memory.applySnapshot(["kept": (.integer(2), 6, nil)], at: 9)
        let other = CloudAccount(clusterID: "c2", namespace: "ns", user: "")
        let old = copy(
            values: ["a": .integer(1)], revisions: ["a": 3], pending: ["z": (.integer(1), 0), "y": (nil, 3)],
            account: other)
        let outcome = memory.takeInLateCopy(old)
        #expect(outcome == LateCopyOutcome(changed: [], restoredWrites: false, dropped: ["y", "z"]))
        #expect(memory.values == ["kept": .integer(2)])
        #expect(memory.pending.isEmpty)
        #expect(!memory.localCopyUnread)
    }
}
