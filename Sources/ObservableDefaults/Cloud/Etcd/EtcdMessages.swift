import Foundation

/// A key-value pair of etcd's, whichever transport brought it: the key (whole, or without the namespace
/// where the store says so), the value (`nil` in a delete event's pair) and its modification revision.
struct EtcdKeyValue: Sendable {
    var key: String
    var value: Data?
    var modRevision: Int64
}

/// The header every etcd answer carries.
struct EtcdHeader: Sendable {
    /// The cluster's ID as decimal digits (it may be above `Int64`'s range); empty when the answer had none.
    var clusterID: String
    var revision: Int64
}

extension DefaultsError {
    /// An answer from etcd that is not what the protocol promises; `context` names the call
    /// (``EtcdWire/context(_:at:)``) and `why` what was wrong.
    static func malformedEtcdAnswer(_ context: String, _ why: String) -> DefaultsError {
        DefaultsError(.cloud, message: "malformed answer from etcd (\(context)): \(why)")
    }
}
