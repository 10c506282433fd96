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

extension AsyncStream where Element: Sendable {
    /// The values an observation delivers, as an asynchronous sequence: `start` begins the observation with
    /// the handler to call; none is dropped, and the observation is cancelled when iteration ends or the
    /// consuming task is cancelled. (The one bridge both stores' `changes()`, `errors()` and
    /// `errorEvents()` use.)
    static func observing(_ start: (@escaping @Sendable (Element) -> Void) -> DefaultsObservation) -> AsyncStream<
        Element
    > {
        AsyncStream { continuation in
            let observation = start { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}

extension DefaultsErrorEvent {
    /// An event handler that passes each error that occurred to `handler`, and ignores recoveries: how both
    /// stores' `observeErrors(_:)` reads the error events.
    static func occurrences(_ handler: @escaping @Sendable (DefaultsError) -> Void)
        -> @Sendable (DefaultsErrorEvent) -> Void
    {
        { event in
            if case .occurred(let error) = event { handler(error) }
        }
    }
}
