import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The byte stream under an HTTP/2 connection: a socket opened like the HTTP/1.1 client's
/// (``EtcdHTTP/Connection/open(url:timeout:deadline:transport:alpn:)``), plain or through TLS, read by the
/// connection's one reader thread and written by any thread.
///
/// Writes are serialised by a lock, so frames never interleave. OpenSSL's connection object must not be used
/// by two threads at once, so with TLS reads take the same lock: the reader waits for bytes with `poll`
/// outside it, and the socket's short receive timeout (``tlsReadSlice``) bounds how long a read holds it
/// when a TLS record arrives in pieces. The descriptor is closed under the lock, once, by ``close()``, so
/// a write or shutdown from another thread never reaches a descriptor number reused by then.
///
/// A frame that need not go out alone (a PING's ACK) rides with the next write instead
/// (``sendWithNextWrite(_:)``), or goes by itself once it waited ``riderDelay``: an ACK sent at once cost a
/// write its own packet, and the member its own wake-up, while it worked on the request whose DATA made
/// gRPC's bandwidth estimator ping (`Docs/cloud.md`, "The wire").
final class HTTP2Socket: @unchecked Sendable {  // mutable state only under `lock`
    private let descriptor: Int32
    private let tls: TLSSession?
    private let lock = NSLock()
    private var closed = false
    /// The last TLS read filled the whole buffer: OpenSSL may hold more of its record, which `poll` cannot see.
    private var readFilledBuffer = false
    /// How many times ``write(_:)`` was called.
    private let writes = Atomic<Int>(0)
    /// Frames waiting to go out after the next write's bytes (see ``sendWithNextWrite(_:)``), and when they
    /// go by themselves at the latest.
    private var riders: [UInt8] = []
    private var ridersDue: ContinuousClock.Instant?

    /// How long one write may wait for the peer to take bytes before the connection counts as broken.
    static let writeTimeout: TimeInterval = 10
    /// The socket's receive timeout with TLS: the longest a read holds the lock.
    static let tlsReadSlice: TimeInterval = 0.05
    /// How long a frame given to ``sendWithNextWrite(_:)`` waits for a write to go out with. Far below any
    /// keepalive timeout a server applies to its PINGs (gRPC's default is 20 s).
    static let riderDelay: Duration = .milliseconds(10)
    /// Riders beyond this many bytes go out at once (a server flooding PINGs grows no buffer).
    static let ridersLimit = 1024

    /// Takes over the connected socket `descriptor` (and its TLS layer, if any), setting its timeouts.
    init(descriptor: Int32, tls: TLSSession?) {
        self.descriptor = descriptor
        self.tls = tls
        Self.setTimeout(descriptor, SO_SNDTIMEO, Self.writeTimeout)
        Self.setTimeout(descriptor, SO_RCVTIMEO, tls == nil ? 0 : Self.tlsReadSlice)
    }

    private static func setTimeout(_ descriptor: Int32, _ option: Int32, _ seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// How many times ``write(_:)`` was called: each call is one piece of the byte stream, which frames are
    /// never split across.
    var writeCount: Int { writes.load(ordering: .relaxed) }

    /// Whether bytes from the peer wait in the socket's receive buffer, not yet read (the peer sent them,
    /// though the reader thread has not taken them yet).
    var hasUnreadBytes: Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return false }
        var count: Int32 = 0
        return ioctl(descriptor, UInt(FIONREAD), &count) == 0 && count > 0
    }

    /// Writes all of `bytes`, then the frames waiting to ride with them, or fails (the connection is then
    /// unusable: a frame may be cut).
    func write(_ bytes: [UInt8]) throws(EtcdHTTP.Failure) {
        writes.add(1, ordering: .relaxed)
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw EtcdHTTP.Failure("the connection is closed") }
        try writeWithRidersLocked(bytes)
    }

    /// Writes `bytes`, then the riders, which no longer wait (under `lock`).
    private func writeWithRidersLocked(_ bytes: [UInt8]) throws(EtcdHTTP.Failure) {
        try writeLocked(riders.isEmpty ? bytes : bytes + riders)
        riders = []
        ridersDue = nil
    }

    /// Sends `frame` after the bytes of the next ``write(_:)``, or by itself after ``riderDelay`` (the reader
    /// thread sends it, see ``read(into:)``) if no write comes first, or now if too many bytes wait.
    func sendWithNextWrite(_ frame: [UInt8]) {
        let tooMany = lock.withLock {
            riders += frame
            if ridersDue == nil { ridersDue = .now + Self.riderDelay }
            return riders.count > Self.ridersLimit
        }
        if tooMany { sendRiders() }
    }

    /// Sends the frames waiting to ride with a write, now. A failure is left to the reader, which then finds
    /// the connection broken.
    private func sendRiders() {
        lock.withLock {
            guard !closed, !riders.isEmpty else { return }
            try? writeWithRidersLocked([])
        }
    }

    /// Sends the riders whose time has come before the reader thread waits for bytes: at once when it has
    /// passed, else when no byte arrives until then.
    private func sendRidersWhenDue() {
        guard let due = lock.withLock({ ridersDue }) else { return }
        let left = ContinuousClock.now.duration(to: due)
        if left > .zero {
            guard !(tls != nil && readFilledBuffer) else { return }  // OpenSSL may hold bytes `poll` cannot see
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, milliseconds) > 0 { return }  // bytes came first: read them, then look again
        }
        sendRiders()
    }

    /// Writes all of `bytes` (under `lock`).
    private func writeLocked(_ bytes: [UInt8]) throws(EtcdHTTP.Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(EtcdHTTP.Failure) in try writeSome(UnsafeRawBufferPointer(rebasing: raw[sent...])) }
            }
            sent += try result.get()
        }
    }

    private func writeSome(_ bytes: UnsafeRawBufferPointer) throws(EtcdHTTP.Failure) -> Int {
        if let tls {
            do throws(TLSError) { return try tls.write(bytes) } catch {
                throw Self.writeFailure(error.timedOut ? nil : error.text)
            }
        }
        while true {
            let count = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count > 0 { return count }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { throw Self.writeFailure(nil) }
            throw Self.writeFailure(String(cString: strerror(errno)))
        }
    }

    /// `why` the write failed, `nil`: the peer took no bytes within ``writeTimeout``.
    private static func writeFailure(_ why: String?) -> EtcdHTTP.Failure {
        guard let why else {
            var failure = EtcdHTTP.Failure(
                "sending did not finish in time: the member took no bytes for \(EtcdHTTP.describe(seconds: writeTimeout))"
            )
            failure.timedOut = true
            return failure
        }
        return EtcdHTTP.Failure("sending failed: \(why)")
    }

    /// Reads some bytes into `buffer` (the reader thread only); 0 when the connection ended. Sends the frames
    /// waiting to ride with a write first, when their time comes before bytes do.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(EtcdHTTP.Failure) -> Int {
        sendRidersWhenDue()
        guard let tls else {
            while true {
                let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
                if count >= 0 { return count }
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw EtcdHTTP.Failure("the connection broke: \(String(cString: strerror(errno)))")
            }
        }
        while true {
            if !readFilledBuffer {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&entry, 1, -1) < 0, errno != EINTR {
                    throw EtcdHTTP.Failure("the connection broke: \(String(cString: strerror(errno)))")
                }
            }
            lock.lock()
            if closed {
                lock.unlock()
                return 0
            }
            let result = Result { () throws(TLSError) in try tls.read(into: buffer) }
            lock.unlock()
            switch result {
            case .success(let count):
                readFilledBuffer = count == buffer.count
                return count
            case .failure(let error) where error.timedOut:
                readFilledBuffer = false  // a record's rest has not arrived yet
            case .failure(let error):
                var failure = EtcdHTTP.Failure("the connection broke: \(error.text)")
                failure.rejected = error.turnedDown
                throw failure
            }
        }
    }

    /// Ends the connection both ways: a read waiting on the reader thread returns 0. Harmless once closed.
    func shutDown() {
        lock.withLock {
            if !closed { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor (the reader thread, when it is done).
    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            _ = Glibc.close(descriptor)
        }
    }
}
