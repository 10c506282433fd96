import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults

#if canImport(Glibc)
    import Glibc
#endif

/// A stream's abort that comes after the stream ended (a watch cancelled, or ending, once its read
/// returned) must not touch the descriptor number it had: by then that number may be another socket's.
@Suite struct EtcdStreamAbortTests {
    @Test func anAbortAfterTheStreamEndedLeavesOtherSocketsAlone() throws {
        let endpoint = try HostileEndpoint { _ in
            [.send(Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8))]
        }
        defer { endpoint.stop() }
        let abort = LockedCallback<Void>()
        let failure = EtcdHTTP.stream(
            url: endpoint.url.appendingPathComponent("/v3/watch"), body: Data("{}".utf8), headers: [:], headTimeout: 5,
            transport: EtcdTransport(), register: { cancel in abort.set { _ in cancel() } }, onStatus: { _ in },
            onData: { _ in true })
        #expect(failure == nil)
        // The stream's descriptor is closed: the next sockets take the lowest free numbers, its among them.
        let listeners = (0..<8).compactMap { _ in loopbackListener() }
        defer { for listener in listeners { close(listener.descriptor) } }
        #expect(listeners.count == 8)
        abort.current?(())
        for listener in listeners {
            #expect(
                Self.accepts(listener.port), "the listener on fd \(listener.descriptor) was shut down by a late abort")
        }
    }

    /// Whether a connection to `port` on the loopback is accepted (queued by the listener).
    private static func accepts(_ port: UInt16) -> Bool {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard client >= 0 else { return false }
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
