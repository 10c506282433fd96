import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The sync loop's state between rounds: what the next round does first, and the back-off.
@Suite struct EtcdSyncPhaseTests {
    @Test func theFirstReadStaysTheFirstUntilItSucceedsAndAReadCoversACheck() {
        var phase = EtcdSyncPhase()
        #expect(phase.opening == .firstRead)
        _ = phase.failed()
        phase.needs(.read)
        #expect(phase.opening == .firstRead, "a failed first read is still the first")
        phase.opened()
        #expect(phase.opening == .nothing)
        phase.needs(.check)
        phase.needs(.read)
        phase.needs(.check)
        #expect(phase.opening == .read, "a read covers the check noted before and after it")
    }

    @Test func failedRoundsBackOffDoublingToASecondAndASuccessEndsTheOutage() {
        var phase = EtcdSyncPhase()
        let endedNone = phase.succeeded()
        #expect(!endedNone, "no outage to end yet")
        let pauses = (0..<7).map { _ in phase.failed() }
        #expect(pauses == [0.05, 0.1, 0.2, 0.4, 0.8, 1, 1])
        #expect(phase.inOutage && phase.opening == .firstRead)
        let ended = phase.succeeded()
        #expect(ended, "this success ends the outage")
        #expect(!phase.inOutage && phase.backoff == EtcdSyncPhase.firstBackoff)
        let endedAgain = phase.succeeded()
        #expect(!endedAgain)
    }
}
