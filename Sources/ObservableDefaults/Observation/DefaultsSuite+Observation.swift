import Foundation

extension DefaultsSuite {
    /// Calls `handler` for every change to the keys that pass the filters.
    ///
    /// - Parameters:
    ///   - keys: only these keys (`nil`: any key). Keys match by their exact bytes: `"caf\u{E9}"` does not
    ///     match `"cafe\u{301}"`, though Swift calls the two strings equal.
    ///   - prefix: only keys whose bytes start with this prefix's bytes (`nil` or empty: any key). With
    ///     `keys` too, a key must pass both.
    ///   - scope: ``DefaultsObservationScope/allProcesses`` (the default) also reports changes made by other
    ///     processes and hand edits, detected by watching the file; ``DefaultsObservationScope/thisProcess``
    ///     reports only changes made through a suite on this file in this process.
    ///   - handler: receives the changed keys that pass the filters and where the change came from. Changes
    ///     made in this process are delivered synchronously on the thread that made them; outside changes on
    ///     the library's watcher thread. Keep handlers short.
    /// - Returns: a token; the observation lasts until it is cancelled or released.
    public func observe(
        keys: Set<String>? = nil, prefix: String? = nil, scope: DefaultsObservationScope = .allProcesses,
        _ handler: @escaping @Sendable (DefaultsChange) -> Void
    ) -> DefaultsObservation {
        let storage = self.storage
        let token = storage.addObserver(
            .init(filter: DefaultsKeyFilter(keys: keys, prefix: prefix), scope: scope, handler: handler))
        return DefaultsObservation { storage.removeObserver(token) }
    }

    /// The changes to the keys that pass the filters, as an asynchronous sequence (see
    /// ``observe(keys:prefix:scope:_:)`` for the parameters). Observation stops when iteration ends or the
    /// consuming task is cancelled. Changes are buffered, none is dropped.
    public func changes(
        keys: Set<String>? = nil, prefix: String? = nil, scope: DefaultsObservationScope = .allProcesses
    ) -> AsyncStream<DefaultsChange> {
        .observing { observe(keys: keys, prefix: prefix, scope: scope, $0) }
    }

    /// Calls `handler` for every error of this suite: the file does not parse (with line and column), a
    /// write failed (permission denied, disk full), a value could not be stored, the directory was removed
    /// or cannot be watched.
    ///
    /// The handler is first called at once, on the calling thread, with each problem that persists now
    /// (``currentErrors``, for example a file that was already broken when the suite was opened) and, for
    /// the first observer, with each error published before anyone observed (the last 64); then for each
    /// new error as it happens.
    public func observeErrors(_ handler: @escaping @Sendable (DefaultsError) -> Void) -> DefaultsObservation {
        observeErrorEvents(DefaultsErrorEvent.occurrences(handler))
    }

    /// Calls `handler` for every error of this suite (as ``observeErrors(_:)``) and whenever a problem
    /// that persisted is over: the file parses again, changes that could not be written landed, the
    /// directory can be watched again (``DefaultsErrorEvent/recovered(_:)``). It is first called at once with
    /// each problem that persists now.
    public func observeErrorEvents(_ handler: @escaping @Sendable (DefaultsErrorEvent) -> Void) -> DefaultsObservation {
        let storage = self.storage
        let token = storage.addErrorHandler(handler)
        return DefaultsObservation { storage.removeErrorHandler(token) }
    }

    /// The events of ``observeErrorEvents(_:)`` as an asynchronous sequence.
    public func errorEvents() -> AsyncStream<DefaultsErrorEvent> {
        .observing { observeErrorEvents($0) }
    }

    /// The errors of this suite as an asynchronous sequence (see ``observeErrors(_:)``).
    public func errors() -> AsyncStream<DefaultsError> {
        .observing { observeErrors($0) }
    }
}
