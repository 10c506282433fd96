import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The pieces behind the client's checks of what members send, without a server: the read limits and how
/// they follow the store's limits, the watch's message limit and event order, and fail-over reporting (two
/// ``HostileEndpoint``s).
@Suite struct EtcdWireLimitsTests {
    @Test func theAnswerLimitIsEightMiBForICloudsLimitsAndGrowsWithLargerOnes() {
        #expect(EtcdReadLimits.standard.answerBytes == 8 << 20)
        #expect(
            EtcdReadLimits(for: .iCloud, keyPrefix: "settings/").answerBytes == 8 << 20,
            "a whole namespace is about 1.8 MB")
        let large = CloudLimits(
            maximumKeyCount: 10_000, maximumTotalBytes: 64 << 20, maximumValueBytes: 64 << 20, maximumKeyBytes: 256)
        let answer = EtcdReadLimits(for: large, keyPrefix: "settings/").answerBytes
        #expect(answer >= 2 * (64 << 20) * 4 / 3, "twice the values in base64: \(answer)")
        #expect(answer < 256 << 20, "\(answer)")
        let absurd = CloudLimits(
            maximumKeyCount: .max, maximumTotalBytes: .max, maximumValueBytes: .max, maximumKeyBytes: .max)
        #expect(EtcdReadLimits(for: absurd, keyPrefix: "p/").answerBytes == Int.max / 4, "no overflow")
        #expect(
            EtcdReadLimits(for: CloudLimits(maximumKeyCount: -1, maximumTotalBytes: -5), keyPrefix: "").answerBytes == 8
                << 20)
        #expect(EtcdReadLimits.describe(8 << 20) == "8 MiB" && EtcdReadLimits.describe(16 << 10) == "16 KiB")
        #expect(EtcdReadLimits.describe(1000) == "1000 bytes")
    }

    /// The client's transport carries the limits of its store, so the watch (made from the client's
    /// transport) reads with them too.
    @Test func aClientReadsWithItsStoresLimits() {
        let limits = CloudLimits(maximumKeyCount: 1024, maximumTotalBytes: 32 << 20)
        let client = EtcdClient(
            configuration: EtcdConfiguration(
                endpoints: [URL(string: "http://127.0.0.1:1")!], namespace: "n", limits: limits))
        #expect(client.transport.limits == EtcdReadLimits(for: limits, keyPrefix: "n/"))
        #expect(client.transport.limits.answerBytes > 8 << 20)
    }

    @Test func aWatchMessageLongerThanTheLimitStopsTheSplitterBeforeItIsKept() {
        func split(_ pieces: [String], limit: Int) -> (lines: [String], exceeded: Bool, pending: Int) {
            var splitter = EtcdMessageLines(limit: limit)
            var lines: [String] = []
            for piece in pieces {
                guard
                    splitter.take(
                        Data(piece.utf8),
                        {
                            lines.append(String(decoding: $0, as: UTF8.self)); return true
                        })
                else { break }
            }
            return (lines, splitter.exceeded, splitter.pending.count)
        }
        #expect(
            split(["12345\n", "1234", "5\n"], limit: 5) == (["12345", "12345"], false, 0), "exactly the limit is fine")
        #expect(split(["123456\n"], limit: 5) == ([], true, 0), "a whole line too long in one piece")
        #expect(
            split(["ab\n123", "456"], limit: 5) == (["ab"], true, 3),
            "growing past the limit without a newline: not appended")
        #expect(split(["1234", "56\nab\n"], limit: 5) == ([], true, 4), "a pending line ended past the limit")
        #expect(split(["ab\n123456"], limit: 5) == (["ab"], true, 0), "the start of the next line is already too long")
        #expect(split(["ab\ncdefgh\nij\n"], limit: 5) == (["ab"], true, 0), "a line too long between others")
        #expect(split([String(repeating: "x", count: 100)], limit: .max) == ([], false, 100), "no limit: as before")
    }

    @Test func watchEventsMustNotGoBackInRevision() {
        var order = EtcdWatchOrder(startRevision: 10)
        #expect(order.take([10, 10, 12]) == nil, "the start revision itself, one transaction's events, a gap")
        #expect(order.take([]) == nil, "a progress notification")
        #expect(order.take([12, 15]) == nil)
        #expect(order.take([16, 14]) == "an event at revision 14 after one at revision 16, expected revisions in order")
        #expect(order.lowest == 15, "a broken message is not taken in")
        #expect(order.take([13]) == "an event at revision 13 after one at revision 15, expected revisions in order")
        var fresh = EtcdWatchOrder(startRevision: 10)
        #expect(fresh.take([9]) == "an event at revision 9, older than revision 10 the watch started from")
    }

    /// A member passed over (here: its answer is broken) is reported through ``EtcdClient/passedOver``
    /// even though the next member answers, and its connection is not kept.
    @Test func aMemberPassedOverIsReportedAndItsConnectionClosed() throws {
        let broken = try HostileEndpoint { _ in [.send(Data("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}".utf8))] }
        defer { broken.stop() }
        let healthy = try HostileEndpoint { _ in [.send(Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".utf8))] }
        defer { healthy.stop() }
        let directory = TemporaryDirectory()
        let client = EtcdClient(
            configuration: EtcdConfiguration(
                endpoints: [broken.url, healthy.url], namespace: "n", stateDirectory: directory.url, requestTimeout: 2
            ).overGateway)
        let passedOver = Locked<[String]>([])
        client.passedOver.set { error in passedOver.withLock { $0.append(error.message) } }
        #expect(throws: Never.self) { _ = try client.status() }
        #expect(
            passedOver.withLock { $0 } == [
                "etcd member \(broken.url.absoluteString) sent a malformed answer: a Content-Length of '-1', expected a decimal number of bytes"
            ])
        #expect(client.currentEndpoint == healthy.url)
        #expect(
            (client.wire as? EtcdGatewayWire)?.connections.take(EtcdTarget(broken.url).member) == nil,
            "the broken connection is not kept")
        #expect(eventually { broken.finishedConnections == 1 })
    }
}
