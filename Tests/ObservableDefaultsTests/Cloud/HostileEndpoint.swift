import EtcdLauncher
import Foundation
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A fake etcd member that misbehaves on purpose: a TCP server on 127.0.0.1 (a free port) that reads each
/// request and answers with scripted raw bytes — broken numbers, endless or trickling answers, watch streams
/// out of order — or forwards it to a real member.
///
/// Every connection has a thread of its own, and every loop is bounded: by the bytes a step may send, by
/// socket timeouts, and by ``stop()`` or the endpoint's lifetime (300 s unless given: a loaded machine may run a
/// test's thread tens of seconds late; every test stops its endpoint when done), after which everything
/// ends by itself. It counts what it sent and whether the client hung up before a step was done, which shows how
/// much a client read before it gave up — deterministically, unlike the process's memory.
final class HostileEndpoint: @unchecked Sendable {
    /// What the endpoint does on a connection after reading its request, in order.
    enum Step: Sendable {
        /// Sends these bytes.
        case send(Data)
        /// Sends these bytes one at a time, `interval` seconds apart.
        case trickle(Data, interval: TimeInterval)
        /// Sends `piece` over and over until `total` bytes are sent, or the client hangs up.
        case repeating(Data, total: Int)
        /// Waits until ``release()``.
        case waitForRelease
        /// Forwards the request, and everything after it both ways, to the member at `target`.
        case forward(to: URL)
    }

    /// A request as the endpoint read it.
    struct Request: Sendable {
        let path: String
        let body: String
        /// The connection's number (from 0, in the order they were accepted).
        let connection: Int
    }

    let port: UInt16
    private let listener: Int32
    private let script: @Sendable (Request) -> [Step]
    private let lifetimeEnd: ContinuousClock.Instant
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var stopped = false
    private var released = false
    private var sent = 0
    private var hangUps = 0
    private var finished = 0
    private var requests: [Request] = []
    /// Requests that came after the first on one connection (a client that kept a connection for more).
    private var laterRequests = 0
    private var descriptors = Set<Int32>()
    private var listenerClosed = false

    /// Starts listening; `script` says what to do with each request. After `lifetime` seconds the endpoint
    /// stops by itself.
    init(lifetime: TimeInterval = 300, _ script: @escaping @Sendable (Request) -> [Step]) throws {
        self.script = script
        lifetimeEnd = ContinuousClock.now + .seconds(lifetime)
        guard let (listener, port) = loopbackListener() else {
            throw EtcdTestError("the hostile endpoint cannot listen: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        self.port = port
        Self.setTimeouts(listener, seconds: 0.2)  // accept() wakes up to see the endpoint stopped, or its lifetime over
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every byte the endpoint's scripted steps got into the socket (forwarded bytes not counted).
    var bytesSent: Int { condition.withLock { sent } }
    /// How many times the client hung up (closed or reset the connection) before a step was done.
    var hangUpCount: Int { condition.withLock { hangUps } }
    /// How many connections ended, their script done or broken off.
    var finishedConnections: Int { condition.withLock { finished } }
    /// The first request of each connection, in order.
    var receivedRequests: [Request] { condition.withLock { requests } }
    /// Requests that came on a connection after its first one (a kept-alive connection used again).
    var laterRequestCount: Int { condition.withLock { laterRequests } }

    /// Lets every ``Step/waitForRelease`` go on (now and later).
    func release() {
        condition.withLock {
            released = true
            condition.broadcast()
        }
    }

    /// Ends everything: no new connections, and every open one is shut down.
    func stop() {
        // Under the lock the descriptors are closed under: a descriptor closed already may carry another
        // socket's number by now (another test's listener), which must not be shut down. Calling this again
        // (a test's `defer`, then `deinit`) does nothing.
        condition.withLock {
            guard !stopped else { return }
            stopped = true
            condition.broadcast()
            if !listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for descriptor in descriptors { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    private var isOver: Bool { condition.withLock { stopped } || ContinuousClock.now >= lifetimeEnd }

    private func acceptLoop() {
        var index = 0
        while !isOver {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                break
            }
            track(client)
            let number = index
            index += 1
            Thread { [self] in serve(client, number: number) }.start()
        }
        condition.withLock {
            listenerClosed = true
            close(listener)
        }
    }

    private func track(_ descriptor: Int32) { condition.withLock { _ = descriptors.insert(descriptor) } }

    private func untrackAndClose(_ descriptor: Int32) {
        condition.withLock {
            descriptors.remove(descriptor)
            close(descriptor)
        }
    }

    private func serve(_ client: Int32, number: Int) {
        defer {
            untrackAndClose(client)
            condition.withLock { finished += 1 }
        }
        Self.setTimeouts(client, seconds: 0.2)
        // A small send buffer: what the endpoint counts as sent is close to what reached the client.
        var size: Int32 = 64 << 10
        setsockopt(client, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        guard let (request, raw) = readRequest(client, number: number) else { return }
        condition.withLock { requests.append(request) }
        for step in script(request) {
            switch step {
            case .send(let data):
                guard sendAll(client, data) else { return }
            case .trickle(let data, let interval):
                for byte in data {
                    guard sendAll(client, Data([byte])) else { return }
                    guard waitOrStop(interval) else { return }
                }
            case .repeating(let piece, let total):
                var left = total
                while left > 0 {
                    guard sendAll(client, piece.prefix(left)) else { return }
                    left -= min(left, piece.count)
                }
            case .waitForRelease:
                condition.withLock {
                    while !released, !stopped,
                        condition.wait(until: Date().addingTimeInterval(0.2)) || ContinuousClock.now < lifetimeEnd
                    {}
                }
            case .forward(let target):
                forward(client, raw, to: target)
                return
            }
        }
        // Done: wait for the client to hang up, counting any further request on this connection.
        var buffer = [UInt8](repeating: 0, count: 4096)
        var counted = false
        while !isOver {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count > 0, !counted {
                counted = true
                condition.withLock { laterRequests += 1 }
            }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { return }
        }
    }

    /// Reads a request's head and its body (by `Content-Length`); also returns its raw bytes.
    private func readRequest(_ client: Int32, number: Int) -> (Request, Data)? {
        var raw = Data()
        var buffer = [UInt8](repeating: 0, count: 16384)
        var headEnd: Range<Data.Index>?
        var bodyLength = 0
        while !isOver, raw.count < 1 << 20 {
            if headEnd == nil, let end = raw.range(of: Data("\r\n\r\n".utf8)) {
                headEnd = end
                let head = String(decoding: raw[..<end.lowerBound], as: UTF8.self).lowercased()
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    bodyLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let headEnd, raw.count - headEnd.upperBound >= bodyLength {
                let head = String(decoding: raw[..<headEnd.lowerBound], as: UTF8.self)
                let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                let body = String(decoding: raw[headEnd.upperBound..<headEnd.upperBound + bodyLength], as: UTF8.self)
                return (Request(path: path, body: body, connection: number), raw)
            }
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count > 0 { raw.append(contentsOf: buffer[0..<count]); continue }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { return nil }
        }
        return nil
    }

    /// Sends all of `data`; false when the client hung up (counted) or the endpoint is over.
    private func sendAll(_ client: Int32, _ data: Data) -> Bool {
        var offset = 0
        while offset < data.count {
            guard !isOver else { return false }
            let count = data.withUnsafeBytes { raw in
                send(client, raw.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                condition.withLock { sent += count }
                continue
            }
            // the client is slow: try again
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            condition.withLock { hangUps += 1 }
            return false
        }
        return true
    }

    /// Waits `seconds`, or less when stopped; false when stopped.
    private func waitOrStop(_ seconds: TimeInterval) -> Bool {
        condition.withLock {
            let until = Date().addingTimeInterval(seconds)
            while !stopped, condition.wait(until: until) {}
            return !stopped && ContinuousClock.now < lifetimeEnd
        }
    }

    /// Sends `request` on to `target`, then pumps bytes both ways until either side closes.
    private func forward(_ client: Int32, _ request: Data, to target: URL) {
        guard let server = connectedIPv4Socket(host: "127.0.0.1", port: target.port ?? 2379, timeout: 2) else { return }
        track(server)
        defer { untrackAndClose(server) }
        Self.setTimeouts(server, seconds: 0.2)
        guard Self.write(server, request) else { return }
        let done = Locked(false)
        let backEnded = Locked(false)
        @Sendable func end() {
            done.withLock { $0 = true }
            shutdown(server, Int32(SHUT_RDWR))
            shutdown(client, Int32(SHUT_RDWR))
        }
        Thread { [self] in
            pump(from: server, to: client, done: done)
            end()
            backEnded.withLock { $0 = true }
        }.start()
        pump(from: client, to: server, done: done)
        end()
        // The other direction sees `done` within one receive timeout; the descriptors are closed after it.
        while !backEnded.withLock({ $0 }) { usleep(1000) }
    }

    private func pump(from source: Int32, to destination: Int32, done: Locked<Bool>) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !isOver, !done.withLock({ $0 }) {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                guard Self.write(destination, Data(buffer[0..<count])) else { return }
                continue
            }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            return
        }
    }

    private static func write(_ descriptor: Int32, _ data: Data) -> Bool {
        var offset = 0
        var attempts = 0
        while offset < data.count, attempts < 100 {
            let count = data.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                attempts += 1
            } else {
                return false
            }
        }
        return offset == data.count
    }

    private static func setTimeouts(_ descriptor: Int32, seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// Raw HTTP and etcd watch messages for ``HostileEndpoint`` scripts.
enum HostileAnswer {
    /// `text` as bytes (`\r\n` written out by the caller).
    static func raw(_ text: String) -> Data { Data(text.utf8) }

    /// A status line, `headers` (each `Name: value`) and the blank line.
    static func head(_ headers: [String], status: String = "HTTP/1.1 200 OK") -> Data {
        Data((([status] + headers).joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// One chunk of a chunked body.
    static func chunk(_ data: Data) -> Data {
        var chunk = Data((String(data.count, radix: 16) + "\r\n").utf8)
        chunk.append(data)
        chunk.append(Data("\r\n".utf8))
        return chunk
    }

    /// The head of a watch answer (chunked, as etcd's gateway sends it).
    static let watchHead = head(["Content-Type: application/json", "Transfer-Encoding: chunked"])

    /// A watch message, with its newline, as one chunk: `created`, or events, each `(key, value, revision)`
    /// (a `nil` value: a delete).
    static func watchMessage(
        clusterID: String, revision: Int64, created: Bool = false,
        events: [(key: String, value: String?, revision: Int64)] = []
    ) -> Data {
        let header =
            #""header":{"cluster_id":"\#(clusterID)","member_id":"1","revision":"\#(revision)","raft_term":"2"}"#
        let list = events.map { event in
            let key = Data(event.key.utf8).base64EncodedString()
            guard let value = event.value else {
                return #"{"type":"DELETE","kv":{"key":"\#(key)","mod_revision":"\#(event.revision)"}}"#
            }
            return
                #"{"kv":{"key":"\#(key)","create_revision":"\#(event.revision)","mod_revision":"\#(event.revision)","version":"1","value":"\#(Data(value.utf8).base64EncodedString())"}}"#
        }
        let body =
            created
            ? #"{"result":{\#(header),"created":true}}"#
            : #"{"result":{\#(header),"events":[\#(list.joined(separator: ","))]}}"#
        return chunk(Data((body + "\n").utf8))
    }
}
