import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The HTTP/2 connection against a real etcd: a raw gRPC unary call (`Maintenance/Status` with an empty
/// message) over h2c and over TLS with ALPN `h2`, several exchanges in parallel on one connection, and a PING.
@Suite(.serialized, EtcdCluster.required) struct HTTP2EtcdTests {
    static let grpcHeaders = [HTTP2Header("content-type", "application/grpc"), HTTP2Header("te", "trailers")]

    static func deadline() -> ContinuousClock.Instant { .now + .seconds(30) }

    /// One `Maintenance/Status` call on `connection`: checks `:status 200`, one gRPC message, and trailers
    /// with `grpc-status: 0`; returns the message's length.
    static func status(_ connection: HTTP2Connection, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let exchange = try connection.exchange(
            path: "/etcdserverpb.Maintenance/Status", headers: grpcHeaders, deadline: deadline())
        try exchange.send(Data([0, 0, 0, 0, 0]), endStream: true, deadline: deadline())
        guard case .headers(let head, endStream: false) = try exchange.receive(deadline: deadline()) else {
            Issue.record("no head first", sourceLocation: sourceLocation)
            return -1
        }
        #expect(head.first == HTTP2Header(":status", "200"), sourceLocation: sourceLocation)
        #expect(head.contains(HTTP2Header("content-type", "application/grpc")), sourceLocation: sourceLocation)
        var body = Data()
        while true {
            switch try exchange.receive(deadline: deadline()) {
            case .data(let data, let endStream):
                body.append(contentsOf: data)
                #expect(!endStream, "the answer ends with trailers", sourceLocation: sourceLocation)
            case .headers(let trailers, let endStream):
                #expect(endStream, sourceLocation: sourceLocation)
                #expect(
                    trailers.contains(HTTP2Header("grpc-status", "0")), "\(trailers)", sourceLocation: sourceLocation)
                // One length-prefixed message: flag 0, a 4-byte length, the message.
                #expect(body.count >= 5, sourceLocation: sourceLocation)
                guard body.count >= 5 else { return -1 }
                let length = body[body.startIndex + 1..<body.startIndex + 5].reduce(0) { $0 << 8 | Int($1) }
                #expect(body.first == 0 && body.count == 5 + length, sourceLocation: sourceLocation)
                return length
            }
        }
    }

    @Test func aRawGRPCStatusCallOverH2CAnswersStatus200OneMessageAndGRPCStatus0() throws {
        let node = try EtcdCluster.sharedNode()
        let connection = try HTTP2Connection.open(
            url: node.endpoints[0], transport: EtcdTransport(), deadline: Self.deadline())
        defer { connection.close() }
        #expect(try Self.status(connection) > 0)
        // A second call on the same connection, and a PING round trip.
        #expect(try Self.status(connection) > 0)
        #expect(try connection.ping(deadline: Self.deadline()) < .seconds(30))
        #expect(connection.isUsable)
    }

    @Test func manyExchangesRunInParallelOnOneConnection() throws {
        let node = try EtcdCluster.sharedNode()
        let connection = try HTTP2Connection.open(
            url: node.endpoints[0], transport: EtcdTransport(), deadline: Self.deadline())
        defer { connection.close() }
        // A long-lived stream (a watch that is never answered) stays open beside the unary calls.
        let watch = try connection.exchange(
            path: "/etcdserverpb.Watch/Watch", headers: Self.grpcHeaders, deadline: Self.deadline())
        let lengths = Locked<[Int]>([])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            do {
                let length = try Self.status(connection)
                lengths.withLock { $0.append(length) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(lengths.withLock { $0.count } == 16)
        #expect(lengths.withLock { Set($0).count } == 1, "every Status answer has the same shape")
        watch.cancel()
        #expect(try Self.status(connection) > 0, "the connection carries on after a cancelled stream")
    }

    /// A protobuf length-delimited field: `field`'s tag (wire type 2), the length as a varint, the bytes.
    static func field(_ field: UInt8, _ bytes: [UInt8]) -> [UInt8] {
        var result = [field << 3 | 2]
        var length = bytes.count
        while length >= 0x80 {
            result.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        return result + [UInt8(length)] + bytes
    }

    /// `message` as one gRPC length-prefixed message.
    static func grpcMessage(_ message: [UInt8]) -> Data {
        var framed: [UInt8] = [0]
        HTTP2Frame.append32(UInt32(message.count), to: &framed)
        return Data(framed + message)
    }

    /// One unary call: sends `message` to `path`, returns the answer's body (checked for `grpc-status: 0`).
    static func call(_ connection: HTTP2Connection, _ path: String, _ message: [UInt8]) throws -> Data {
        let exchange = try connection.exchange(path: path, headers: grpcHeaders, deadline: deadline())
        try exchange.send(grpcMessage(message), endStream: true, deadline: deadline())
        var body = Data()
        while true {
            switch try exchange.receive(deadline: deadline()) {
            case .data(let data, _): body.append(contentsOf: data)
            case .headers(let headers, let endStream):
                guard endStream else { continue }
                #expect(headers.contains(HTTP2Header("grpc-status", "0")), "\(headers)")
                return body
            }
        }
    }

    /// A range answer of over 8 MiB (six values of 1.4 MiB, each under etcd's request limit) flows through the
    /// 1 MiB stream window as the caller takes it, within seconds.
    @Test func aRangeAnswerOfOver8MiBFlowsThroughTheStreamWindow() throws {
        let node = try EtcdCluster.sharedNode()
        let connection = try HTTP2Connection.open(
            url: node.endpoints[0], transport: EtcdTransport(), deadline: Self.deadline())
        defer { connection.close() }
        try Self.checkLargeRange(connection)
    }

    /// Puts six values of 1.4 MB and reads them back in one range answer, within seconds.
    static func checkLargeRange(_ connection: HTTP2Connection, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let prefix = Array("h2-range-\(UUID().uuidString)/".utf8)
        let value = [UInt8](repeating: 0x61, count: 1_400_000)
        for index in 0..<6 {
            _ = try call(
                connection, "/etcdserverpb.KV/Put", field(1, prefix + Array("\(index)".utf8)) + field(2, value))
        }
        var end = prefix
        end[end.count - 1] += 1
        let started = ContinuousClock.now
        let body = try call(connection, "/etcdserverpb.KV/Range", field(1, prefix) + field(2, end))
        let took = started.duration(to: .now)
        print("8.4 MB range answer over HTTP/2 in \(took)")
        #expect(body.count > 6 * 1_400_000 && body.count < 6 * 1_400_000 + 4096, sourceLocation: sourceLocation)
        #expect(took < .seconds(20), sourceLocation: sourceLocation)
    }

    /// How many descriptors the process has open.
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Closed connections, and ones merely released, give their socket back (their reader thread ends).
    @Test func closedAndReleasedConnectionsGiveTheirDescriptorsBack() throws {
        let node = try EtcdCluster.sharedNode()
        let before = Self.openDescriptors()
        for round in 0..<20 {
            let connection = try HTTP2Connection.open(
                url: node.endpoints[0], transport: EtcdTransport(), deadline: Self.deadline())
            #expect(try Self.status(connection) > 0)
            if round % 2 == 0 { connection.close() }
        }
        // Other tests may open descriptors meanwhile: the 20 sockets must not all stay.
        #expect(
            eventually(timeout: .seconds(30)) { Self.openDescriptors() < before + 10 },
            "before \(before), now \(Self.openDescriptors())")
    }

    @Test func overTLSTheConnectionChoosesH2WithALPN() throws {
        let node = try EtcdCluster(members: 1, tls: EtcdTLSTests.server)
        #expect(node.endpoints[0].scheme == "https")
        let transport = EtcdTransport(EtcdTLS(caFile: EtcdTLSTests.ca))
        let connection = try HTTP2Connection.open(
            url: node.endpoints[0], transport: transport, deadline: Self.deadline())
        defer { connection.close() }
        #expect(try Self.status(connection) > 0)
        let lengths = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            if let length = try? Self.status(connection) { lengths.withLock { $0.append(length) } }
        }
        #expect(lengths.withLock { $0.count } == 6)
        #expect(try connection.ping(deadline: Self.deadline()) < .seconds(30))
        try Self.checkLargeRange(connection)

        // h2c to the TLS port: a clear sentence pointing at https://.
        let plainToTLS = URL(string: "http://127.0.0.1:\(node.endpoints[0].port!)")!
        do {
            _ = try HTTP2Connection.open(url: plainToTLS, transport: EtcdTransport(), deadline: .now + .seconds(10))
            Issue.record("h2c to a TLS member connected")
        } catch {
            print("h2c to a TLS member: \(error.text)")
            #expect(error.text.contains("https://"), "\(error.text)")
        }
    }

    @Test func anHTTPSEndpointOnAPlainMemberIsAClearError() throws {
        let node = try EtcdCluster.sharedNode()
        let tlsToPlain = URL(string: "https://127.0.0.1:\(node.endpoints[0].port!)")!
        do {
            _ = try HTTP2Connection.open(
                url: tlsToPlain, transport: EtcdTransport(EtcdTLS(caFile: EtcdTLSTests.ca)),
                deadline: .now + .seconds(5))
            Issue.record("TLS to a plain member connected")
        } catch {
            #expect(error.text.contains("TLS"), "\(error.text)")
        }
    }
}
