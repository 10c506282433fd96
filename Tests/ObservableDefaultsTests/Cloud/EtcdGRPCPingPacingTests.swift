import Testing
@testable import ObservableDefaults

/// The pace of a store's PINGs to one member (``EtcdGRPCPingPacing``): never closer than the spacing unless
/// the member wrote since the last PING, and twice as far apart after each GOAWAY over pings, up to a cap.
@Suite struct EtcdGRPCPingPacingTests {
    @Test func pingsAreSpacedUnlessTheMemberWroteSinceTheLastOne() {
        var pacing = EtcdGRPCPingPacing()
        let start = ContinuousClock.now
        let first = pacing.shouldPing(at: start, reads: 0, memberWrote: false)
        #expect(first, "the first PING is always allowed")
        let soon = pacing.shouldPing(at: start + .seconds(1), reads: 0, memberWrote: false)
        #expect(!soon)
        let almost = pacing.shouldPing(
            at: start + EtcdGRPCPingPacing.initialSpacing - .milliseconds(1), reads: 0, memberWrote: false)
        #expect(!almost)
        let free = pacing.shouldPing(at: start + .seconds(2), reads: 0, memberWrote: true)
        #expect(free, "the member wrote: the PING is free")
        // A free PING counts too: the next paid one is a whole spacing after it.
        let afterFirst = pacing.shouldPing(
            at: start + EtcdGRPCPingPacing.initialSpacing + .seconds(1), reads: 0, memberWrote: false)
        #expect(!afterFirst)
        let afterFree = pacing.shouldPing(
            at: start + .seconds(2) + EtcdGRPCPingPacing.initialSpacing, reads: 0, memberWrote: false)
        #expect(afterFree)
    }

    @Test func aMemberThatSentSomethingSinceTheLastProbeIsNotPinged() {
        var pacing = EtcdGRPCPingPacing()
        let start = ContinuousClock.now
        let first = pacing.shouldPing(at: start, reads: 5, memberWrote: true)
        #expect(first)
        // Long past the spacing, but the member sent something (the PING's ACK, an event): no PING.
        let afterAnswer = pacing.shouldPing(at: start + .seconds(60), reads: 6, memberWrote: false)
        #expect(!afterAnswer)
        let quiet = pacing.shouldPing(at: start + .seconds(61), reads: 6, memberWrote: false)
        #expect(quiet, "nothing arrived since the last probe")
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
