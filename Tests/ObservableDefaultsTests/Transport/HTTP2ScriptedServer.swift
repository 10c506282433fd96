import EtcdLauncher
import Foundation
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A scripted HTTP/2 server on a loopback port for the hostile cases: it accepts one connection and runs
/// `script` with a ``Peer`` on its own thread — reading the client's frames and sending whatever frames or
/// raw bytes the test wants, well-formed or not.
///
/// Everything is bounded: each read waits at most `readTimeout`, the script ends on a closed connection,
/// and ``stop()`` (or releasing the server) shuts the sockets down.
final class HTTP2ScriptedServer: @unchecked Sendable {  // mutable state only under `condition`
    /// The server's side of the connection, used by the script's thread only.
    final class Peer {
        let descriptor: Int32
        private var reader = HTTP2FrameReader(maximumSize: 1 << 24)
        /// The frames read so far, in order.
        private(set) var received: [HTTP2Frame] = []

        init(descriptor: Int32) { self.descriptor = descriptor }

        /// Sends raw bytes; false when the client is gone.
        @discardableResult
        func send(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }

        @discardableResult
        func send(_ frame: HTTP2Frame) -> Bool { send(frame.encoded) }

        /// Sends SETTINGS with `settings` (identifier, value).
        @discardableResult
        func sendSettings(_ settings: [(UInt16, UInt32)] = []) -> Bool {
            var payload: [UInt8] = []
            for (identifier, value) in settings {
                payload += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
                HTTP2Frame.append32(value, to: &payload)
            }
            return send(HTTP2Frame(type: HTTP2Frame.settings, stream: 0, payload: payload))
        }

        /// A header block for `headers`, HPACK-encoded.
        static func block(_ headers: [(String, String)]) -> [UInt8] {
            var encoder = HPACKEncoder()
            return encoder.encode(headers.map { HTTP2Header($0.0, $0.1) })
        }

        /// Sends a complete HEADERS frame.
        @discardableResult
        func sendHeaders(stream: UInt32, _ headers: [(String, String)], endStream: Bool = false) -> Bool {
            send(
                HTTP2Frame(
                    type: HTTP2Frame.headers,
                    flags: HTTP2Frame.endHeaders | (endStream ? HTTP2Frame.endStream : 0), stream: stream,
                    payload: Self.block(headers)))
        }

        /// Reads the client's preface and its SETTINGS; false if they did not come.
        func readPreface() -> Bool {
            var preface = [UInt8](repeating: 0, count: HTTP2Frame.preface.count)
            var got = 0
            while got < preface.count {
                let count = preface[got...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return false }
                got += count
            }
            guard preface == HTTP2Frame.preface else { return false }
            return next { $0.type == HTTP2Frame.settings } != nil
        }

        /// Reads the client's preface, sends empty SETTINGS and waits for the client's ACK of them: the
        /// connection is idle on both sides then. False if something did not come.
        func completeHandshake() -> Bool {
            guard readPreface(), sendSettings() else { return false }
            return next(timeout: .seconds(30)) { $0.type == HTTP2Frame.settings && $0.has(HTTP2Frame.ack) } != nil
        }

        /// The next frame from the client (within `timeout`), `nil` when it closed or nothing came.
        func readFrame(timeout: Duration = .seconds(30)) -> HTTP2Frame? {
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                if let frame = try? reader.next() {
                    received.append(frame)
                    return frame
                }
                guard ContinuousClock.now < deadline else { return nil }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                guard count > 0 else { return nil }
                reader.append(buffer[..<count])
            }
        }

        /// Reads frames until one matches `condition` (within `timeout`); `nil` if none did.
        func next(timeout: Duration = .seconds(30), _ condition: (HTTP2Frame) -> Bool) -> HTTP2Frame? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline,
                let frame = readFrame(timeout: ContinuousClock.now.duration(to: deadline))
            {
                if condition(frame) { return frame }
            }
            return nil
        }

        /// Reads until the client's stream `stream` ended its request (END_STREAM), answering nothing.
        func readRequest(stream: UInt32) -> Bool {
            next {
                $0.stream == stream && $0.has(HTTP2Frame.endStream)
                    && ($0.type == HTTP2Frame.data || $0.type == HTTP2Frame.headers)
            } != nil
        }
    }

    let port: UInt16
    private let listener: Int32
    private let condition = NSCondition()
    private var descriptors: [Int32] = []
    private var finished = false
    private var stopped = false

    /// Listens, and runs `script` on the first connection accepted.
    init(_ script: @escaping @Sendable (Peer) -> Void) throws {
        guard let (listener, port) = loopbackListener() else {
            throw EtcdTestError("the scripted HTTP/2 server cannot listen: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        self.port = port
        Thread { [self] in
            let client = accept(listener, nil, nil)
            condition.withLock {
                if client >= 0 { descriptors.append(client) }
            }
            if client >= 0 {
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var sendTimeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
                script(Peer(descriptor: client))
            }
            condition.withLock {
                finished = true
                condition.broadcast()
            }
        }.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Waits (bounded) until the script returned.
    func waitUntilFinished(timeout: TimeInterval = 60) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !finished, condition.wait(until: deadline) {}
            return finished
        }
    }

    /// Shuts the listener and the connection down (the script's reads and writes then fail), and waits for
    /// the script to return before closing the descriptors.
    func stop() {
        let first = condition.withLock { () -> Bool in
            defer { stopped = true }
            guard !stopped else { return false }
            shutdown(listener, Int32(SHUT_RDWR))
            for descriptor in descriptors { shutdown(descriptor, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        _ = waitUntilFinished()
        condition.withLock {
            for descriptor in descriptors { close(descriptor) }
            close(listener)
        }
    }

    deinit { stop() }
}
