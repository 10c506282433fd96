/// A callback behind a lock: set on one thread, called or taken on others.
///
/// Not `Locked<((Argument) -> Void)?>`: a function that is itself the value of a generic container is
/// wrapped in two more reabstraction thunks each time `withLock` hands it out `inout` and takes it back, so
/// every call through it gets slower and holds more memory. The cloud store's notification sender grew by
/// two thunks per change it posted (a fifth of an observing process's time after 4,000 changes; a chain
/// deeper than a profiler's stack). Held in a struct's field, the function is stored as it is.
final class LockedCallback<Argument>: Sendable {
    private struct Stored: Sendable {
        let call: @Sendable (Argument) -> Void
    }

    private let stored: Locked<Stored?>

    init(_ call: (@Sendable (Argument) -> Void)? = nil) {
        stored = Locked(call.map { Stored(call: $0) })
    }

    /// Replaces the callback (`nil` removes it).
    func set(_ call: (@Sendable (Argument) -> Void)?) {
        let new = call.map { Stored(call: $0) }
        stored.withLock { $0 = new }
    }

    /// The callback now, if any.
    var current: (@Sendable (Argument) -> Void)? {
        stored.withLock { $0?.call }
    }

    /// Removes the callback and returns it (a one-shot action runs once).
    func take() -> (@Sendable (Argument) -> Void)? {
        stored.withLock { $0.take()?.call }
    }

    /// Whether there is no callback.
    var isEmpty: Bool {
        stored.withLock { $0 == nil }
    }
}
