import Foundation

extension CloudKeyValueStore {
    /// Calls `handler` for every change from elsewhere (never this store's own writes) to keys that pass
    /// the filters (see ``DefaultsSuite/observe(keys:prefix:scope:_:)`` for `keys` and `prefix`), with its
    /// reason. Handlers run one at a time, in order, on the store's delivery queue or on the thread that
    /// received the change (the watch's; over gRPC, the member connection's reader thread); never while the
    /// store's lock is held. A handler may call the store, also ``synchronize()``. The observation lasts until
    /// the token is cancelled or released.
    public func observe(
        keys: Set<String>? = nil, prefix: String? = nil, _ handler: @escaping @Sendable (CloudChange) -> Void
    ) -> DefaultsObservation {
        let core = self.core
        let token = core.addObserver(.init(filter: DefaultsKeyFilter(keys: keys, prefix: prefix), handler: handler))
        return DefaultsObservation { core.removeObserver(token) }
    }

    /// Calls `handler` for every change to the keys that pass the filters, with where it came from, as
    /// ``DefaultsSuite/observe(keys:prefix:scope:_:)`` does for a suite: the same scopes, the same
    /// ``DefaultsChange``.
    ///
    /// - ``DefaultsObservationScope/thisProcess``: writes made through this store in this process (any
    ///   handle, any `@ObservableCloud` object on it, ``register(defaults:)-([String:DefaultsValue])`` when a key's
    ///   readable value changes), with origin ``DefaultsChangeOrigin/thisProcess``.
    /// - ``DefaultsObservationScope/allProcesses``: those, and every change from elsewhere — other machines
    ///   and processes, a local write the server refused, the first contact with the server, an account
    ///   change — with origin ``DefaultsChangeOrigin/outside``. A refused write past the store's limits
    ///   changed no value and is not a change here (it is on the error channel, and reaches
    ///   ``observe(keys:prefix:_:)`` as a quota violation).
    ///
    /// Handlers run one at a time, in order, never while the store's lock is held. The observation lasts
    /// until the token is cancelled or released.
    public func observe(
        keys: Set<String>? = nil, prefix: String? = nil, scope: DefaultsObservationScope,
        _ handler: @escaping @Sendable (DefaultsChange) -> Void
    ) -> DefaultsObservation {
        let core = self.core
        let filter = DefaultsKeyFilter(keys: keys, prefix: prefix)
        let local = core.addObserver(
            .init(
                filter: filter, handler: { handler(DefaultsChange(keys: $0.keys, origin: .thisProcess)) },
                hearsLocalWrites: true, hearsOutsideChanges: false))
        let outside =
            scope == .thisProcess
            ? nil
            : core.addObserver(
                .init(
                    filter: filter,
                    handler: { change in
                        if change.reason != .quotaViolation {
                            handler(DefaultsChange(keys: change.keys, origin: .outside))
                        }
                    }))
        return DefaultsObservation {
            core.removeObserver(local)
            if let outside { core.removeObserver(outside) }
        }
    }

    /// The changes of ``observe(keys:prefix:scope:_:)`` as an asynchronous sequence; none is dropped.
    public func changes(keys: Set<String>? = nil, prefix: String? = nil, scope: DefaultsObservationScope)
        -> AsyncStream<DefaultsChange>
    {
        .observing { observe(keys: keys, prefix: prefix, scope: scope, $0) }
    }

    /// The changes of ``observe(keys:prefix:_:)`` as an asynchronous sequence; none is dropped.
    public func changes(keys: Set<String>? = nil, prefix: String? = nil) -> AsyncStream<CloudChange> {
        .observing { observe(keys: keys, prefix: prefix, $0) }
    }

    /// Calls `handler` for every error: unreachable members, a refused login, a malformed answer, a server
    /// value that does not decode, a local copy that cannot be written, a refused value. It is first called
    /// at once with each problem that persists now (``currentErrors``), e.g. that a local-only store does
    /// not sync, and, for the first observer, with each error published before anyone observed (the last
    /// 64: a store starts syncing as it is made, so an error may come before the observer does).
    public func observeErrors(_ handler: @escaping @Sendable (DefaultsError) -> Void) -> DefaultsObservation {
        observeErrorEvents(DefaultsErrorEvent.occurrences(handler))
    }

    /// Calls `handler` for every error (as ``observeErrors(_:)``) and whenever a problem that persisted is
    /// over: the cluster answers again, the local copy can be written again, a server value decodes again
    /// (``DefaultsErrorEvent/recovered(_:)``). A problem that persists is reported once, when it starts: a
    /// cluster out of reach is one error however many attempts fail, and its latest form is in
    /// ``currentErrors``. It is first called at once with each problem that persists now.
    public func observeErrorEvents(_ handler: @escaping @Sendable (DefaultsErrorEvent) -> Void) -> DefaultsObservation {
        let core = self.core
        let token = core.addErrorHandler(handler)
        return DefaultsObservation { core.removeErrorHandler(token) }
    }

    /// The events of ``observeErrorEvents(_:)`` as an asynchronous sequence.
    public func errorEvents() -> AsyncStream<DefaultsErrorEvent> {
        .observing { observeErrorEvents($0) }
    }

    /// The errors of ``observeErrors(_:)`` as an asynchronous sequence.
    public func errors() -> AsyncStream<DefaultsError> {
        .observing { observeErrors($0) }
    }

    /// The problems that persist now (empty when the store is healthy and synced, or has nothing to say).
    public var currentErrors: [DefaultsError] { core.currentErrors }
}
