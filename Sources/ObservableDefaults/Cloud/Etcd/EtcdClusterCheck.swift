import Foundation

/// Which etcd cluster a running store's answers must come from.
///
/// Every etcd answer (a read, an upload, a status probe, each watch message) carries the cluster ID in its
/// header. Once a namespace read has told the store its cluster (``expect(_:)``), an answer from another
/// cluster — the cluster was re-created at the same addresses, with new data and revisions starting again
/// from 1 — is refused by ``verify(_:endpoint:)`` and remembered, until the sync thread reads the
/// namespace again and takes the new cluster in as an account change.
final class EtcdClusterCheck: Sendable {
    private struct State {
        /// The cluster the store's values and revisions came from (`nil` before the first read).
        var expected: String?
        /// Another cluster seen in an answer since.
        var found: String?
        /// The error ``verify(_:endpoint:)`` threw for it.
        var refusal: DefaultsError?
    }

    private let state = Locked(State())

    /// The store's values now come from `clusterID` (a namespace read took them in).
    func expect(_ clusterID: String) {
        state.withLock { $0 = State(expected: clusterID) }
    }

    /// Whether an answer came from another cluster than the store's values since the last ``expect(_:)``.
    var foundAnotherCluster: Bool { state.withLock { $0.found != nil } }

    /// Whether `error` is the one ``verify(_:endpoint:)`` threw for an answer from another cluster (and
    /// not, say, a connection failure met since).
    func refused(with error: DefaultsError) -> Bool { state.withLock { $0.refusal == error } }

    /// Throws when `header` names another cluster than the expected one (an answer without a header, or a
    /// header without a cluster ID, passes: the caller reports that as malformed where it needs the header).
    func verify(_ header: EtcdHeader?, endpoint: URL) throws(DefaultsError) {
        guard let clusterID = header?.clusterID, !clusterID.isEmpty else { return }
        try verify(clusterID, endpoint: endpoint)
    }

    /// Throws when `clusterID` is another cluster than the expected one, and remembers it.
    func verify(_ clusterID: String, endpoint: URL) throws(DefaultsError) {
        let refusal = state.withLock { state -> DefaultsError? in
            guard let expected = state.expected, expected != clusterID else { return nil }
            state.found = clusterID
            state.refusal = DefaultsError(
                .cloud,
                message:
                    "etcd member \(endpoint.absoluteString) answers for cluster \(clusterID), not cluster \(expected) the store's values came from (the cluster was re-created); reading the namespace again as an account change"
            )
            return state.refusal
        }
        if let refusal { throw refusal }
    }
}
