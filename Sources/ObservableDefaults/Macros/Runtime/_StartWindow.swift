import Synchronization

/// A test-only pause in a property's start-up load, between reading the source and storing the copy (the
/// one moment a change can slip between the two; see `_DefaultsSlot.load(from:fullKey:)`).
///
/// Tests install a body for a full key, make a change while the load waits in it, and check that the
/// object ends with that change and tells its observers once. Without installed bodies, a load pays one
/// atomic read.
enum _StartWindow {
    private static let bodies = Locked<[String: @Sendable () -> Void]>([:])
    private static let installed = Atomic<Int>(0)

    /// Runs the body installed for `fullKey`, if any.
    static func pause(fullKey: String) {
        guard installed.load(ordering: .acquiring) > 0 else { return }
        bodies.withLock { $0[fullKey] }?()
    }

    /// Runs `body` in every start-up load of `fullKey` until `remove` is called on the result.
    static func install(forKey fullKey: String, _ body: @escaping @Sendable () -> Void) -> Installation {
        bodies.withLock { $0[fullKey] = body }
        installed.add(1, ordering: .releasing)
        return Installation(fullKey: fullKey)
    }

    /// One installed body (see ``_StartWindow/install(forKey:_:)``).
    struct Installation: Sendable {
        let fullKey: String

        func remove() {
            bodies.withLock { _ = $0.removeValue(forKey: fullKey) }
            _StartWindow.installed.subtract(1, ordering: .releasing)
        }
    }
}
