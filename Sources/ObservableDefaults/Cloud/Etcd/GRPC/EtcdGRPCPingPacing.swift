/// When the store's probe PINGs one member's connection.
///
/// A member that sent anything since the last probe answers: no PING then, as gRPC's keepalive pings only
/// a quiet connection (a fleet's stores send none while changes flow).
///
/// gRPC servers police pings: etcd allows one every `--grpc-keepalive-min-time` (5 s unless configured), and a
/// client that pings sooner three times gets GOAWAY ENHANCE_YOUR_CALM 'too_many_pings' and a closed
/// connection — its watch ends and is made again, every few seconds, on every store of a fleet (grpc-proxy
/// keeps gRPC's default, one PING every 5 minutes). A PING is free when the member wrote HEADERS or DATA
/// since the last one (the servers reset their count then); otherwise a probe pings at most once per
/// ``spacing`` (a probe in between finds the member as it was at the last answered PING), and a member that
/// still says 'too_many_pings' doubles the spacing, as gRPC's own clients do.
struct EtcdGRPCPingPacing: Sendable, Equatable {
    /// The spacing to begin with: etcd's default minimum, with a margin for scheduling.
    static let initialSpacing: Duration = .seconds(6)
    /// The longest spacing doubling reaches (grpc-go's servers default to a 5-minute minimum).
    static let largestSpacing: Duration = .seconds(640)

    /// The least time between two PINGs on the member's connections.
    private(set) var spacing = initialSpacing
    /// When the last PING was sent.
    private var lastPing: ContinuousClock.Instant?
    /// The connection's read count (``HTTP2Connection/readCount``) at the last probe.
    private var readsAtLastProbe: Int?

    /// Whether a probe `now` should PING, given the connection's read count (`reads`) and whether the
    /// member wrote HEADERS or DATA since the last PING; if so, the PING counts as sent.
    mutating func shouldPing(at now: ContinuousClock.Instant, reads: Int, memberWrote: Bool) -> Bool {
        defer { readsAtLastProbe = reads }
        if let readsAtLastProbe, reads != readsAtLastProbe { return false }
        return mayPing(at: now, free: memberWrote)
    }

    /// Whether the member's keepalive policy lets a PING go `now` (`free`: the member wrote since the last
    /// one); if so, it counts as sent.
    private mutating func mayPing(at now: ContinuousClock.Instant, free: Bool) -> Bool {
        if !free, let lastPing, lastPing.duration(to: now) < spacing { return false }
        lastPing = now
        return true
    }

    /// The member closed a connection because of its pings: ping half as often from now on.
    mutating func pingedTooOften() {
        spacing = min(spacing * 2, Self.largestSpacing)
    }
}
