import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults
import TestSupport

/// The kernel timer behind the HTTP/2 reader's relief check: it runs its work once, after the delay last
/// armed; disarmed or released, it runs nothing.
@Suite struct OneShotTimerTests {
    final class Count: Sendable {
        private let value = Mutex(0)
        private let firstAt = Mutex<ContinuousClock.Instant?>(nil)
        func add() {
            value.withLock { $0 += 1 }
            firstAt.withLock { $0 = $0 ?? .now }
        }
        var count: Int { value.withLock { $0 } }
        var first: ContinuousClock.Instant? { firstAt.withLock { $0 } }
    }

    @Test func itRunsItsWorkOnceAfterTheDelay() throws {
        let count = Count()
        let timer = try #require(OneShotTimer { count.add() })
        let start = ContinuousClock.now
        timer.arm(after: .milliseconds(20))
        #expect(eventually(timeout: .seconds(5)) { count.count == 1 })
        if let first = count.first { #expect(first - start >= .milliseconds(20), "ran before its delay") }
        // One shot: nothing more comes.
        #expect(!eventually(timeout: .milliseconds(200)) { count.count > 1 })
    }

    // The settings replaced or disarmed below are a second away: only a stall of a second between two
    // statements (never seen, even on a loaded machine) could let one expire first.
    @Test func armingAgainReplacesTheEarlierSetting() throws {
        let count = Count()
        let timer = try #require(OneShotTimer { count.add() })
        timer.arm(after: .seconds(60))
        timer.arm(after: .milliseconds(10))
        #expect(eventually(timeout: .seconds(5)) { count.count == 1 })
        timer.arm(after: .seconds(1))
        timer.arm(after: .seconds(60))
        #expect(!eventually(timeout: .milliseconds(1_300)) { count.count > 1 }, "the earlier setting still ran")
    }

    @Test func aDisarmedOrReleasedTimerRunsNothing() throws {
        let count = Count()
        let timer = try #require(OneShotTimer { count.add() })
        timer.arm(after: .seconds(1))
        timer.disarm()
        var released = OneShotTimer { count.add() }
        released?.arm(after: .seconds(1))
        released = nil
        #expect(!eventually(timeout: .milliseconds(1_300)) { count.count > 0 })
        withExtendedLifetime(timer) {}
    }
}
