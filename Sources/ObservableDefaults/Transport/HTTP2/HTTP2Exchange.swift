import Foundation

/// One header field of an HTTP/2 request or answer (names are lower-case, as HTTP/2 requires).
struct HTTP2Header: Sendable, Equatable {
    /// The name, lower-case.
    var name: String
    /// The value.
    var value: String

    /// The header `name: value`.
    init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What the server sent on one stream, in order: a header block (the answer's head, or its trailers), or
/// some of the body.
enum HTTP2Received: Sendable, Equatable {
    /// A complete header block (HEADERS and its CONTINUATION frames, decoded); `endStream`: the server
    /// sends nothing more on this stream (trailers, or a head without a body).
    case headers([HTTP2Header], endStream: Bool)
    /// Some of the body, as it arrived (a DATA frame's payload without padding); `endStream`: the last of it.
    case data([UInt8], endStream: Bool)
}

/// One request–answer exchange on an HTTP/2 stream, used by gRPC calls: a unary call sends one message and
/// reads the answer; a watch keeps sending and receiving on the same exchange. Calls block their thread.
///
/// Failures are ``EtcdHTTP/Failure``s, shared with the HTTP/1.1 client, so the etcd client treats a
/// member's failure the same whichever protocol carried it.
protocol HTTP2Exchange: AnyObject, Sendable {
    /// Sends `data` as the request body's next bytes, waiting for the flow-control windows to open as far
    /// as needed, until `deadline` (`nil`: no bound); `endStream` ends the request body.
    func send(_ data: Data, endStream: Bool, deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure)

    /// The next thing the server sent on this stream, waiting for it until `deadline` (`nil`: no bound).
    /// Throws when the stream or the connection failed or was reset, or the deadline passed.
    func receive(deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) -> HTTP2Received

    /// Ends the exchange early (the stream is reset with `CANCEL`); a `receive` or `send` waiting on another
    /// thread returns with a failure. Harmless after the exchange ended.
    func cancel()

    /// Hands everything the server sends from now on to `consumer`, one item at a time and in order, until it
    /// returns false or the server ends the stream (then returns), or the stream fails (then throws). The
    /// calling thread waits meanwhile; `consumer` may run on another thread (an ``HTTP2Connection`` runs it on
    /// the thread that reads the connection, saving a hand-off per item).
    func consume(_ consumer: (HTTP2Received) -> Bool) throws(EtcdHTTP.Failure)
}

extension HTTP2Exchange {
    /// ``consume(_:)`` by receiving on the calling thread.
    func consume(_ consumer: (HTTP2Received) -> Bool) throws(EtcdHTTP.Failure) {
        while true {
            let item = try receive(deadline: nil)
            guard consumer(item) else { return }
            switch item {
            case .headers(_, true), .data(_, true): return
            default: continue
            }
        }
    }
}
