import Foundation
import Testing
@testable import ObservableDefaults

/// ``CloudState``'s bookkeeping of revisions, driven as the etcd sync drives it (watch events, confirmed
/// uploads, the watch's progress): old news stays old news, and a store whose keys come and go does not
/// keep an entry for every key it ever saw.
@Suite struct CloudStateTests {
    /// 5,000 keys created and deleted one after the other, the watch following: the deleted keys'
    /// revisions are forgotten once the watch is past them; a key that exists keeps its revision, and an
    /// old event of it is still ignored.
    @Test func deletedKeysAreForgottenOnceTheWatchIsPastThem() {
        var state = CloudState()
        let changed1 = state.applyServerValue(.integer(1), forKey: "kept", revision: 1)
        #expect(changed1)
        state.watchReached(1)
        var revision: Int64 = 1
        var largest = 0
        for index in 0..<5_000 {
            revision += 1
            let changed2 = state.applyServerValue(.integer(index), forKey: "key\(index)", revision: revision)
            #expect(changed2)
            revision += 1
            let changed3 = state.applyServerValue(nil, forKey: "key\(index)", revision: revision)
            #expect(changed3)
            state.watchReached(revision)
            largest = max(largest, state.knownRevisions.count)
        }
        #expect(largest <= 1_024, "known revisions grew to \(largest)")
        #expect(state.knownRevisions["kept"] == 1)
        let changed4 = state.applyServerValue(.integer(0), forKey: "kept", revision: 1)
        #expect(!changed4)
        #expect(state.values == ["kept": .integer(1)])
        #expect(state.lastRevision == revision)
    }

    /// This store's own removal, confirmed before the watch brings its event: its revision is kept
    /// through a pruning pass until the watch is past it, so the echo is not announced.
    @Test func anOwnRemovalAheadOfTheWatchStaysKnownUntilItsEcho() {
        var state = CloudState()
        let changed5 = state.applyServerValue(.integer(1), forKey: "mine", revision: 1)
        #expect(changed5)
        state.watchReached(1)
        state.setValue(nil, forKey: "mine")
        let removal = PendingWrite(value: nil, baseRevision: 1, generation: 1)
        state.pending["mine"] = removal
        state.inFlight["mine"] = removal
        // Confirmed at revision 5_000: far ahead of the watch, which still brings other keys' churn.
        state.confirmUpload(removal, forKey: "mine", revision: 5_000)
        for index in 0..<1_500 {
            let revision = Int64(2 + index * 2)
            _ = state.applyServerValue(.integer(index), forKey: "other\(index)", revision: revision)
            _ = state.applyServerValue(nil, forKey: "other\(index)", revision: revision + 1)
            state.watchReached(revision + 1)
        }
        #expect(state.knownRevisions.count < 1_500)  // a pass ran
        #expect(state.knownRevisions["mine"] == 5_000)
        let changed6 = state.applyServerValue(nil, forKey: "mine", revision: 5_000)
        #expect(!changed6)  // the echo: nothing to announce
        state.watchReached(5_000)
    }

    /// A read of the whole namespace (after compaction) is a catch-up too: the keys it found gone are
    /// forgotten by the next pass, which comes once the entries have doubled since the last one.
    @Test func aWholeReadLetsTheNextPassForgetKeysThatAreGone() {
        var state = CloudState()
        for index in 0..<600 {
            _ = state.applyServerValue(.integer(index), forKey: "key\(index)", revision: Int64(index + 1))
        }
        state.watchReached(600)
        let changed = state.applySnapshot(["key0": (.integer(0), 1, nil)], at: 3_000)
        #expect(changed.count == 599)
        #expect(state.knownRevisions.count == 600)  // no pass yet: far fewer entries than the first pass's 1,024
        #expect(state.values == ["key0": .integer(0)])
        for index in 0..<500 {  // keys come and go after it
            let revision = Int64(3_001 + index * 2)
            _ = state.applyServerValue(.integer(index), forKey: "new\(index)", revision: revision)
            _ = state.applyServerValue(nil, forKey: "new\(index)", revision: revision + 1)
            state.watchReached(revision + 1)
        }
        #expect(state.knownRevisions.count < 100, "\(state.knownRevisions.count) revisions kept")
        #expect(state.knownRevisions["key0"] == 1)
    }
}
