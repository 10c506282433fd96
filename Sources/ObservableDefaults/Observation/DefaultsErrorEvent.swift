import Foundation

/// What an error channel says (``DefaultsSuite/observeErrorEvents(_:)``,
/// ``CloudKeyValueStore/observeErrorEvents(_:)``): a problem, or that a problem is over.
///
/// A problem that persists (a file that does not parse, writes that cannot land, a cluster out of reach)
/// is one ``occurred(_:)`` when it starts and one ``recovered(_:)`` when it ends, however many failed
/// attempts lie between: an etcd member stopped is one error, not one per broken connection and retry.
public enum DefaultsErrorEvent: Sendable, Equatable {
    /// A new problem.
    case occurred(DefaultsError)
    /// A problem that persisted is over (the file parses again, the pending writes landed, the cluster
    /// answers again); carries the last error known of it.
    case recovered(DefaultsError)

    /// The error the event is about.
    public var error: DefaultsError {
        switch self {
        case .occurred(let error), .recovered(let error): error
        }
    }
}
