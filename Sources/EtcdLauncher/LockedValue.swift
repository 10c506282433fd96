import Foundation

/// A value guarded by an `NSLock`, for the launcher's shared state.
///
/// Not `Synchronization.Mutex`: no target of a plain `swift build` imports that module, so a clean build
/// does not rebuild its interface for the index store (see `Docs/benchmarks.md`, "Clean debug build").
final class LockedValue<Value> {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}

// The value is only reached under the lock, so sharing the lock is safe when the value may cross threads.
extension LockedValue: @unchecked Sendable where Value: Sendable {}
