import Testing
@testable import ObservableDefaults

/// The pace of a store's PINGs to one member (``EtcdGRPCPingPacing``): never closer than the spacing unless
/// the member wrote since the last PING, and twice as far apart after each GOAWAY over pings, up to a cap.
@Suite struct EtcdGRPCPingPacingTests {
    @Test func pingsAreSpacedUnlessTheMemberWroteSinceTheLastOne() {
        var pacing = EtcdGRPCPingPacing()
        let start = ContinuousClock.now
        let first = pacing.mayPing(at: start, free: false)
        #expect(first, "the first PING is always allowed")
        let soon = pacing.mayPing(at: start + .seconds(1), free: false)
        #expect(!soon)
        let almost = pacing.mayPing(at: start + EtcdGRPCPingPacing.initialSpacing - .milliseconds(1), free: false)
        #expect(!almost)
        let free = pacing.mayPing(at: start + .seconds(2), free: true)
        #expect(free, "the member wrote: the PING is free")
        // A free PING counts too: the next paid one is a whole spacing after it.
        let afterFirst = pacing.mayPing(at: start + EtcdGRPCPingPacing.initialSpacing + .seconds(1), free: false)
        #expect(!afterFirst)
        let afterFree = pacing.mayPing(at: start + .seconds(2) + EtcdGRPCPingPacing.initialSpacing, free: false)
        #expect(afterFree)
    }

    @Test func eachGoAwayOverPingsDoublesTheSpacingUpToTheCap() {
        var pacing = EtcdGRPCPingPacing()
        #expect(pacing.spacing == .seconds(6))
        pacing.pingedTooOften()
        #expect(pacing.spacing == .seconds(12))
        for _ in 0..<20 { pacing.pingedTooOften() }
        #expect(pacing.spacing == EtcdGRPCPingPacing.largestSpacing)
        #expect(EtcdGRPCPingPacing.largestSpacing > .seconds(300), "past grpc-proxy's 5-minute policy")
    }
}
