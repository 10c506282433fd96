import Foundation
import Synchronization
@testable import ObservableDefaults

/// An in-memory ``HTTP2Exchange``: what the "server" sends is queued by the test (at the start, or later
/// from another thread), what the client sends is recorded. `receive` waits for the queue by polling, until
/// its deadline, a cancel, or a bound of 10 s that fails the test rather than hanging it.
final class GRPCTestExchange: HTTP2Exchange {
    private struct State {
        var incoming: [HTTP2Received] = []
        var sent: [(Data, endStream: Bool)] = []
        var cancelled = false
    }

    private let state: Mutex<State>

    init(_ incoming: [HTTP2Received] = []) {
        state = Mutex(State(incoming: incoming))
    }

    /// Queues what the server sends next.
    func deliver(_ received: HTTP2Received) {
        state.withLock { $0.incoming.append(received) }
    }

    /// Everything the client sent, joined, and whether its last send ended the stream.
    var sent: (data: Data, endStream: Bool) {
        state.withLock { state in (state.sent.reduce(Data()) { $0 + $1.0 }, state.sent.last?.endStream ?? false) }
    }

    var cancelled: Bool { state.withLock { $0.cancelled } }

    /// What has not been received yet.
    var undelivered: Int { state.withLock { $0.incoming.count } }

    func send(_ data: Data, endStream: Bool, deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) {
        try state.withLock { state throws(EtcdHTTP.Failure) in
            if state.cancelled { throw EtcdHTTP.Failure("the stream was cancelled") }
            state.sent.append((data, endStream))
        }
    }

    func receive(deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) -> HTTP2Received {
        let bound = ContinuousClock.now + .seconds(10)
        while true {
            let next = state.withLock { state -> Result<HTTP2Received, EtcdHTTP.Failure>? in
                if state.cancelled { return .failure(EtcdHTTP.Failure("the stream was cancelled")) }
                return state.incoming.isEmpty ? nil : .success(state.incoming.removeFirst())
            }
            if let next { return try next.get() }
            let now = ContinuousClock.now
            if let deadline, now >= deadline {
                var failure = EtcdHTTP.Failure("nothing arrived in time")
                failure.timedOut = true
                throw failure
            }
            if now >= bound { throw EtcdHTTP.Failure("the test exchange waited 10 s for a scripted answer") }
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }
}

/// An ``HTTP2ExchangeOpening`` that hands out one test exchange (or fails) and records the request.
final class GRPCTestOpener: HTTP2ExchangeOpening {
    private struct Opened {
        var path: String?
        var headers: [HTTP2Header] = []
        var count = 0
    }

    let exchange: GRPCTestExchange
    private let failure: EtcdHTTP.Failure?
    private let opened = Mutex(Opened())

    init(_ exchange: GRPCTestExchange, failing failure: EtcdHTTP.Failure? = nil) {
        self.exchange = exchange
        self.failure = failure
    }

    /// The path and headers of the last exchange opened, and how many were.
    var path: String? { opened.withLock { $0.path } }
    var headers: [HTTP2Header] { opened.withLock { $0.headers } }
    var count: Int { opened.withLock { $0.count } }

    func exchange(path: String, headers: [HTTP2Header], deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure)
        -> any HTTP2Exchange
    {
        opened.withLock {
            $0.path = path
            $0.headers = headers
            $0.count += 1
        }
        if let failure { throw failure }
        return exchange
    }
}

/// What a gRPC server sends, for scripting test exchanges.
enum GRPCScript {
    static let head = HTTP2Received.headers(
        [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")], endStream: false)

    static func trailers(_ status: Int, _ message: String? = nil) -> HTTP2Received {
        var headers = [HTTP2Header("grpc-status", "\(status)")]
        if let message { headers.append(HTTP2Header("grpc-message", message)) }
        return .headers(headers, endStream: true)
    }

    static func data(_ bytes: some Sequence<UInt8>, endStream: Bool = false) -> HTTP2Received {
        .data(Array(bytes), endStream: endStream)
    }

    /// A framed message.
    static func frame(_ message: [UInt8]) -> [UInt8] { Array(GRPCFraming.frame(message)) }
}
