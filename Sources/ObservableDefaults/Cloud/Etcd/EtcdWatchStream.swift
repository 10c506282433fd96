import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One etcd watch over the JSON gateway: `POST /v3/watch` answered by a chunked stream of JSON objects,
/// one per line, read as they arrive through a `URLSession` delegate.
///
/// Each message's events go to `onEvents` in order; the stream ends once, through `onEnd`: the connection
/// broke, the server ended it with an error, or it cancelled the watch (after compaction, with the
/// compacted revision). Messages are handled on one serial queue.
final class EtcdWatchStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// How a watch ended.
    enum End: Sendable {
        case failed(DefaultsError)
        /// The history the watch needed was compacted away up to this revision: re-read and diff.
        case compacted(Int64)
        /// ``cancel()`` was called.
        case cancelled
    }

    let endpoint: URL
    private let request: URLRequest
    private let onEvents: @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void
    private let onEnd: @Sendable (End) -> Void
    private let queue = OperationQueue()
    /// Only touched on `queue`.
    private var buffer = Data()
    private let ended = Locked(false)
    private let sessionBox = Locked<URLSession?>(nil)

    init(
        endpoint: URL, prefix: String, startRevision: Int64, headers: [String: String],
        onEvents: @escaping @Sendable (EtcdHeader, [(EtcdKeyValue, deleted: Bool)]) -> Void,
        onEnd: @escaping @Sendable (End) -> Void
    ) {
        self.endpoint = endpoint
        var request = URLRequest(url: endpoint.appendingPathComponent("/v3/watch"))
        request.httpMethod = "POST"
        // A quiet watch is fine: hung members are found by probing, not by the idle timeout.
        request.timeoutInterval = 365 * 24 * 3600
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        // Without it a member that lost its leader keeps the watch open and silent.
        request.setValue("true", forHTTPHeaderField: "Grpc-Metadata-hasleader")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let create: [String: Any] = ["create_request": [
            "key": EtcdRequest.base64(prefix), "range_end": EtcdRequest.prefixEnd(prefix),
            "start_revision": String(startRevision),
        ]]
        request.httpBody = try? JSONSerialization.data(withJSONObject: create)
        self.request = request
        self.onEvents = onEvents
        self.onEnd = onEnd
        queue.maxConcurrentOperationCount = 1
        super.init()
    }

    func start() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 365 * 24 * 3600
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        sessionBox.withLock { $0 = session }
        session.dataTask(with: request).resume()
    }

    /// Ends the watch; `onEnd(.cancelled)` follows unless it ended already.
    func cancel() { finish(.cancelled) }

    private func finish(_ end: End) {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        sessionBox.withLock { session in
            session?.invalidateAndCancel()  // also releases this delegate
            session = nil
        }
        onEnd(end)
    }

    private var context: String { "watch at \(endpoint.absoluteString)" }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        buffer.append(data)
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = buffer[buffer.startIndex..<newline]
            buffer = Data(buffer[(newline + 1)...])
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { continue }
            if ended.withLock({ $0 }) { return }
            do {
                try handle(EtcdAnswer(data: Data(line), context: context))
            } catch {
                finish(.failed(error))
                return
            }
        }
    }

    private func handle(_ message: EtcdAnswer) throws(DefaultsError) {
        if let error = message.object["error"] {
            let detail = (error as? [String: Any])?["message"] as? String ?? "\(error)"
            throw DefaultsError(.cloud, message: "etcd ended the watch (\(context)): \(detail)")
        }
        guard let result = try message.child("result") else { throw message.malformed("neither 'result' nor 'error'") }
        if result.bool("canceled") {
            let compacted = try result.int64("compact_revision")
            if compacted > 0 { finish(.compacted(compacted)); return }
            throw DefaultsError(.cloud, message: "etcd cancelled the watch (\(context)): \(result.string("cancel_reason") ?? "no reason given")")
        }
        let events = try result.children("events")
        guard !events.isEmpty else { return }  // created, or a progress notification
        var pairs: [(EtcdKeyValue, deleted: Bool)] = []
        for event in events {
            guard let pair = try event.child("kv") else { throw event.malformed("an event without 'kv'") }
            pairs.append((try pair.keyValue(), event.string("type") == "DELETE"))
        }
        onEvents(try result.header(), pairs)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
            finish(.failed(DefaultsError(.cloud, message: "etcd answered the watch with HTTP \(status) (\(context))")))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let why = error?.localizedDescription ?? "the server closed the stream"
        finish(.failed(DefaultsError(.cloud, message: "the watch on etcd member \(endpoint.absoluteString) ended: \(why)")))
    }
}
