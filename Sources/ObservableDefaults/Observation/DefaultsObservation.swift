/// A running observation of a suite (changes or errors). Call ``cancel()`` to stop it; it also stops when
/// the token is released.
public final class DefaultsObservation: Sendable, Hashable {
    private let cancellation: LockedCallback<Void>

    init(cancellation: @escaping @Sendable () -> Void) {
        self.cancellation = LockedCallback { _ in cancellation() }
    }

    /// Stops the observation: no new handler call begins after it returns (one already running on another
    /// thread may finish). Calling it again does nothing.
    public func cancel() {
        cancellation.take()?(())
    }

    /// Whether ``cancel()`` has been called (or the token was never active).
    public var isCancelled: Bool { cancellation.isEmpty }

    deinit { cancel() }

    /// Tokens are equal only to themselves.
    public static func == (lhs: DefaultsObservation, rhs: DefaultsObservation) -> Bool { lhs === rhs }
    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
