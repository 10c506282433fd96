import Foundation

/// One watch over etcd's gRPC `Watch` method: a create request on a bidirectional stream of the member's
/// shared connection (``EtcdGRPCConnections``), with `hasleader: true` so that a member without a leader
/// ends the watch instead of keeping it silent; each answer message read into an ``EtcdWatchMessage``. The
/// first (the watch created) is read on the calling thread within the head's deadline; every later one on
/// the thread that reads the connection, as it arrives (``GRPCStream/consume(_:_:)``), while the calling
/// thread waits: an event reaches the store with no hand-off between threads.
struct EtcdGRPCWatch {
    let endpoint: URL
    let connections: EtcdGRPCConnections
    let limits: EtcdReadLimits

    private var context: String { "watch at \(endpoint.absoluteString)" }

    /// Runs the watch until the stream ends or `receive` returns false; how the stream ended
    /// (see ``EtcdWire/watch(_:at:token:headTimeout:register:receive:)``).
    func run(
        _ request: EtcdWatchRequest, token: String?, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void, receive: (EtcdWatchMessage) -> Bool
    ) -> EtcdWatchStream.End {
        var headDeadline = EtcdHTTP.deadline(after: headTimeout)
        let stream: GRPCStream
        let connection: HTTP2Connection
        let reads: Int
        do throws(GRPCFailure) {
            connection = try connections.connection(to: endpoint, deadline: headDeadline, beforeOpening: {})
            reads = connection.readCount
            // No deadline: a watch may stay quiet indefinitely (the head's deadline bounds the first answer).
            stream = try GRPCStream.open(
                path: EtcdProto.WatchRequest.path, metadata: GRPCCall.etcdMetadata(token: token, requireLeader: true),
                deadline: nil, limits: limits, on: connection)
        } catch {
            return ending(error, headTimeout: headTimeout, on: nil, readsAtStart: nil)
        }
        register { stream.cancel() }
        let create = EtcdProto.WatchCreateRequest(
            key: Array(request.prefix.utf8), rangeEnd: Array(EtcdRangeRequest.prefixEnd(request.prefix)),
            startRevision: request.startRevision)
        let closed = EtcdWatchStream.End.failed(
            DefaultsError(
                .cloud,
                message: "the watch on etcd member \(endpoint.absoluteString) ended: the server closed the stream"))
        var end: EtcdWatchStream.End?
        /// Hands one answer over; false once the watch is to end with `end`.
        func take(_ response: EtcdProto.WatchResponse) -> Bool {
            let message: EtcdWatchMessage
            do throws(DefaultsError) {
                message = try Self.message(response, context: context)
            } catch {
                end = .failed(error)
                return false
            }
            guard receive(message) else {
                end = .cancelled
                return false
            }
            return true
        }
        do throws(GRPCFailure) {
            try stream.send(EtcdProto.WatchRequest(.create(create)), deadline: headDeadline)
            var heardAt = reads
            var extensions = 0
            var first: EtcdProto.WatchResponse??
            while first == nil {
                do throws(GRPCFailure) {
                    first = try stream.receive(EtcdProto.WatchResponse.self, deadline: headDeadline)
                } catch {
                    // On a connection shared by many stores, the first answer may queue behind the others'
                    // (a thousand watches created at once): a member that sent anything since is busy, not
                    // hung (the probe's PINGs find a hung one). Wait a head timeout more, ten times at most.
                    guard case .transport(let failure) = error, failure.timedOut, extensions < 10,
                        connection.heardFrom(since: heardAt)
                    else { throw error }
                    extensions += 1
                    heardAt = connection.readCount
                    headDeadline = EtcdHTTP.deadline(after: headTimeout)
                }
            }
            guard let first = first ?? nil else { return closed }
            if take(first), try stream.consume(EtcdProto.WatchResponse.self, take) { return closed }
            stream.cancel()
            return end ?? .cancelled
        } catch {
            stream.cancel()
            return ending(error, headTimeout: headTimeout, on: connection, readsAtStart: reads)
        }
    }

    /// How a failed watch ended (on `connection`, once it was open, whose read count was `reads` when the
    /// watch began).
    private func ending(
        _ error: GRPCFailure, headTimeout: TimeInterval, on connection: HTTP2Connection?, readsAtStart reads: Int?
    ) -> EtcdWatchStream.End {
        switch error {
        case .status(let status):
            return .failed(DefaultsError(.cloud, message: "etcd ended the watch (\(context)): \(status.message)"))
        case .transport(let failure):
            connections.drop(endpoint, after: failure, readsAtStart: reads)
            if connection?.wasPingedTooOften == true { return .interrupted }
            if failure.malformed {
                let error = DefaultsError(
                    .cloud, message: "etcd member \(endpoint.absoluteString) \(failure.text) (\(context))")
                return failure.tooLarge ? .tooLarge(error) : .failed(error)
            }
            let why =
                failure.timedOut
                ? "no answer within \(EtcdHTTP.describe(seconds: headTimeout)): \(failure.text)" : failure.text
            return .failed(
                DefaultsError(.cloud, message: "the watch on etcd member \(endpoint.absoluteString) ended: \(why)"))
        }
    }

    /// Reads one answer of the watch.
    static func message(_ response: EtcdProto.WatchResponse, context: String) throws(DefaultsError) -> EtcdWatchMessage
    {
        var message = EtcdWatchMessage(header: response.header.map { EtcdGRPCWire.header($0) }, events: [])
        if response.canceled {
            message.cancelled = (response.compactRevision, response.cancelReason.isEmpty ? nil : response.cancelReason)
            return message
        }
        message.events.reserveCapacity(response.events.count)
        for event in response.events {
            guard let pair = event.kv else { throw .malformedEtcdAnswer(context, "an event without 'kv'") }
            let deleted = event.type == .delete
            message.events.append((EtcdGRPCWire.pair(pair, deleted: deleted), deleted))
        }
        return message
    }
}
