import Foundation

/// Why a cloud store's values changed from elsewhere: iCloud's four reasons, with its raw values.
public enum CloudChangeReason: Int, Sendable, Equatable, CustomStringConvertible {
    /// Another machine (or process) changed the keys on the server, or the server refused a local write
    /// because another machine had changed the key first (the server wins).
    case serverChange = 0
    /// The first contact with the server found these keys different from the local copy.
    case initialSync = 1
    /// A local write was refused because it would pass the store's ``CloudLimits``; nothing changed.
    case quotaViolation = 2
    /// The local copy came from another cluster, namespace or user; it was replaced by the server's values.
    case accountChange = 3

    /// `serverChange`, `initialSync`, `quotaViolation` or `accountChange`.
    public var description: String {
        switch self {
        case .serverChange: "serverChange"
        case .initialSync: "initialSync"
        case .quotaViolation: "quotaViolation"
        case .accountChange: "accountChange"
        }
    }
}

/// One change of a cloud store that did not come from this store's own writes: the keys and the reason.
public struct CloudChange: Sendable, Equatable, CustomStringConvertible {
    /// The keys whose value changed (for ``CloudChangeReason/quotaViolation``: the key that was refused).
    public var keys: Set<String>
    /// Why they changed.
    public var reason: CloudChangeReason

    /// Creates a change event.
    public init(keys: Set<String>, reason: CloudChangeReason) {
        self.keys = keys
        self.reason = reason
    }

    /// The reason and the sorted keys, e.g. `serverChange: host, port`.
    public var description: String { "\(reason): \(keys.sorted().joined(separator: ", "))" }
}

#if !canImport(Darwin)
    /// On Linux the cloud store is the library's: code written for Apple platforms that touches
    /// `NSUbiquitousKeyValueStore` directly compiles unchanged.
    public typealias NSUbiquitousKeyValueStore = CloudKeyValueStore
#endif

/// The `userInfo` key of ``CloudKeyValueStore/didChangeExternallyNotification`` holding the reason as an
/// `Int` (the reason's `rawValue`), as on Apple platforms.
public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
/// The `userInfo` key of ``CloudKeyValueStore/didChangeExternallyNotification`` holding the changed keys as `[String]`.
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
/// The reason value of a server change (0).
public let NSUbiquitousKeyValueStoreServerChange = CloudChangeReason.serverChange.rawValue
/// The reason value of an initial sync (1).
public let NSUbiquitousKeyValueStoreInitialSyncChange = CloudChangeReason.initialSync.rawValue
/// The reason value of a quota violation (2).
public let NSUbiquitousKeyValueStoreQuotaViolationChange = CloudChangeReason.quotaViolation.rawValue
/// The reason value of an account change (3).
public let NSUbiquitousKeyValueStoreAccountChange = CloudChangeReason.accountChange.rawValue
