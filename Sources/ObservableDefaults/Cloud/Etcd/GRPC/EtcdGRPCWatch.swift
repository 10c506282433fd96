import Foundation

/// One watch over etcd's gRPC `Watch` method: a create request on the Watch stream that the watches over the
/// member's connection share (``EtcdGRPCWatchChannel``, opened with `hasleader: true` so that a member without
/// a leader ends the watches instead of keeping them silent); each answer for it read into an
/// ``EtcdWatchMessage`` on the thread that reads the connection, as it arrives, while the calling thread
/// waits: an event reaches the store with no hand-off between threads.
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
        let connection: HTTP2Connection
        do throws(GRPCFailure) {
            connection = try connections.connection(
                to: endpoint, deadline: EtcdHTTP.deadline(after: headTimeout), beforeOpening: {})
        } catch {
            return ending(error, headTimeout: headTimeout, on: nil, readsAtStart: nil)
        }
        let reads = connection.readCount
        let key = EtcdGRPCWatchChannels.Key(endpoint: endpoint, token: token, answerBytes: limits.answerBytes)
        let (channel, opens) = connections.watchChannels.join(key, on: connection)
        if opens { channel.open(token: token, limits: limits) }
        let create = EtcdProto.WatchCreateRequest(
            key: Array(request.prefix.utf8), rangeEnd: Array(EtcdRangeRequest.prefixEnd(request.prefix)),
            startRevision: request.startRevision)
        var end: EtcdWatchStream.End?
        // Every answer names the same cluster: its ID's digits are written once (answers come one at a time).
        var cluster = ClusterText()
        let outcome = withoutActuallyEscaping(receive) { receive in
            channel.watch(create, headTimeout: headTimeout, register: register) { response in
                let message: EtcdWatchMessage
                do throws(DefaultsError) {
                    message = try Self.message(response, cluster: &cluster, context: context)
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
        }
        switch outcome {
        case .stopped: return end ?? .cancelled
        case .fellBehind: return .interrupted
        case .closed:
            return .failed(
                DefaultsError(
                    .cloud,
                    message: "the watch on etcd member \(endpoint.absoluteString) ended: the server closed the stream"))
        case .failed(let error):
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

    /// The last cluster ID an answer named, with its digits.
    struct ClusterText {
        private var id: UInt64 = 0
        private var text = ""

        /// The header `header` reads as, the digits of its cluster ID made only when it is another cluster's.
        mutating func header(_ header: EtcdProto.ResponseHeader) -> EtcdHeader {
            if header.clusterID != id {
                id = header.clusterID
                text = EtcdGRPCWire.header(header).clusterID
            }
            return EtcdHeader(clusterID: text, revision: header.revision)
        }
    }

    /// Reads one answer of the watch; `cluster` keeps the digits of the cluster ID answers name.
    static func message(
        _ response: EtcdProto.WatchResponse, cluster: inout ClusterText, context: @autoclosure () -> String
    ) throws(DefaultsError) -> EtcdWatchMessage {
        var message = EtcdWatchMessage(header: response.header.map { cluster.header($0) }, events: [])
        if response.canceled {
            message.cancelled = (response.compactRevision, response.cancelReason.isEmpty ? nil : response.cancelReason)
            return message
        }
        message.events.reserveCapacity(response.events.count)
        for event in response.events {
            guard let pair = event.kv else { throw .malformedEtcdAnswer(context(), "an event without 'kv'") }
            let deleted = event.type == .delete
            message.events.append((EtcdGRPCWire.pair(pair, deleted: deleted), deleted))
        }
        return message
    }
}
