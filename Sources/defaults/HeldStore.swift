import ObservableDefaults
import Synchronization

/// The store of `defaults cloud watch`, held so that the signal handler can release it before removing
/// the state directory: a released store stops its local copy's writes (waiting for one in progress), so
/// nothing re-creates the directory afterwards, not even the at-exit flush. Observers use the store only
/// inside ``use(_:)``, so none of them keeps it alive past ``release()``.
final class HeldStore: Sendable {
    private let store: Mutex<CloudKeyValueStore?>

    init(_ store: CloudKeyValueStore) { self.store = Mutex(store) }

    /// Runs `body` with the store, unless it was released. Keep `body` short and never wait for the
    /// store's deliveries in it (`synchronize`): deliveries wait for the lock it holds.
    func use(_ body: (CloudKeyValueStore) -> Void) {
        store.withLock { if let store = $0 { body(store) } }
    }

    /// Releases the store; when this returns, the store is gone and its local copy written for the last time.
    func release() {
        let last = store.withLock { $0.take() }
        withExtendedLifetime(last) {}  // the last reference: the store's deinit runs here, outside the lock
    }
}
