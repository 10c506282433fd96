import EtcdLauncher
import Foundation
@testable import ObservableDefaults

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP proxy in front of one etcd member that forwards bytes both ways, except once: the answer
/// to the first request whose text contains `trigger` is swallowed and its connection closed — a
/// connection that breaks after the member carried the request out, before the client heard the outcome —
/// and new connections are closed at once until ``release()``, so the client's attempt ends without an answer.
/// Watch streams are held back meanwhile too (the client does not see the echo of its own write yet).
final class DroppingProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let target: UInt16
    private let trigger: String
    private let condition = NSCondition()
    private var triggered = false
    private var answerSwallowed = false
    private var released = false
    private var listenerClosed = false
    /// How many interim `100 Continue` answers the member sent (each one a write of its own, read by the
    /// client on its own).
    private var interimAnswers = 0

    init(forwardingTo target: URL, dropAnswerTo trigger: String) throws {
        self.target = UInt16(target.port ?? 2379)
        self.trigger = trigger
        guard let (listener, port) = loopbackListener() else {
            throw DefaultsError(.cloud, message: "the test proxy cannot listen: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        self.port = port
        Thread { [self] in acceptLoop() }.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Waits until the member's answer to the trigger request was swallowed.
    func waitUntilAnswerSwallowed(timeout: TimeInterval = 15) -> Bool {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !answerSwallowed, condition.wait(until: deadline) {}
            return answerSwallowed
        }
    }

    /// How many interim `100 Continue` answers passed from the member to the client so far.
    var interimAnswerCount: Int { condition.withLock { interimAnswers } }

    /// Lets new connections through again.
    func release() {
        condition.withLock {
            released = true
            condition.broadcast()
        }
    }

    /// Lets everything through and stops accepting. The listener is closed by the accept loop, under the
    /// lock this shuts it down under: once closed, its number may be another socket's (another test's).
    func stop() {
        release()
        condition.withLock {
            if !listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                condition.withLock {
                    listenerClosed = true
                    close(listener)
                }
                return
            }
            if condition.withLock({ triggered && !released }) {
                close(client)
                continue
            }
            guard let server = connectedIPv4Socket(host: "127.0.0.1", port: Int(target)) else {
                close(client); continue
            }
            let dropping = Locked(false)
            let watching = Locked(false)
            Thread { [self] in pump(from: client, to: server, dropping: dropping, watching: watching, upstream: true) }
                .start()
            Thread { [self] in pump(from: server, to: client, dropping: dropping, watching: watching, upstream: false) }
                .start()
        }
    }

    private func pump(
        from source: Int32, to destination: Int32, dropping: Locked<Bool>, watching: Locked<Bool>, upstream: Bool
    ) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            if upstream, text.contains("/v3/watch") { watching.withLock { $0 = true } }
            if !upstream, text.contains("HTTP/1.1 100 ") { condition.withLock { interimAnswers += 1 } }
            if upstream, text.contains(trigger) {
                condition.withLock {
                    if !triggered { triggered = true; dropping.withLock { $0 = true } }
                }
            }
            if !upstream, watching.withLock({ $0 }) {
                condition.withLock { while triggered, !released { condition.wait() } }
            }
            if !upstream, dropping.withLock({ $0 }) {
                // Swallow the final answer (the request was carried out),
                // then break the connection.
                guard String(decoding: buffer[0..<count], as: UTF8.self).contains("{\"header\"") else { continue }
                condition.withLock {
                    answerSwallowed = true
                    condition.broadcast()
                }
                break
            }
            _ = buffer.withUnsafeBytes { send(destination, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}
