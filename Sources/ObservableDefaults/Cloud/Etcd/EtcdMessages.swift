import Foundation

/// A key-value pair of etcd's, whichever transport brought it: the key (whole, or without the namespace
/// where the store says so), the value (`nil` in a delete event's pair) and its modification revision.
struct EtcdKeyValue: Sendable {
    /// The key, as UTF-8 text.
    var key: String
    /// The value's bytes (`nil`: a deletion's pair; an empty value may come as `nil` too).
    var value: Data?
    /// The revision of the key's last modification.
    var modRevision: Int64
}

/// The header every etcd answer carries.
struct EtcdHeader: Sendable {
    /// The cluster's ID as decimal digits (it may be above `Int64`'s range); empty when the answer had none.
    var clusterID: String
    /// The store's revision when the member answered.
    var revision: Int64
}

extension DefaultsError {
    /// An answer from etcd that is not what the protocol promises; `context` names the call
    /// (``EtcdWire/context(_:at:)``) and `why` what was wrong.
    static func malformedEtcdAnswer(_ context: String, _ why: String) -> DefaultsError {
        DefaultsError(.cloud, message: "malformed answer from etcd (\(context)): \(why)")
    }
}
