import Foundation

/// What a property write of an `@ObservableCloud` object reads of its configuration, without a lock.
extension _CloudObjectBinding {
    /// The store (fixed from the first one built), the key prefix, the object's own store observer (which
    /// its writes skip), the keys more than one property is mapped to, whether to upload at once, and whether
    /// the store is the object's own development store (where assigning `nil` to an Optional keeps `nil`).
    ///
    /// Immutable: a change of the configuration (`configure`, the start of the observation) withdraws it, and
    /// the next write builds a new one; the binding publishes it with `_PublishedConfiguration`, as the
    /// defaults family's binding does its own.
    final class WriteConfiguration: Sendable {
        let store: CloudKeyValueStore
        let prefix: String
        let observer: Int?
        let sharedKeys: Set<String>
        let syncImmediately: Bool
        let keepsAssignedNil: Bool

        init(
            store: CloudKeyValueStore, prefix: String, observer: Int?, sharedKeys: Set<String>, syncImmediately: Bool,
            keepsAssignedNil: Bool
        ) {
            self.store = store
            self.prefix = prefix
            self.observer = observer
            self.sharedKeys = sharedKeys
            self.syncImmediately = syncImmediately
            self.keepsAssignedNil = keepsAssignedNil
        }
    }

    /// The configuration a property write reads: the published one, read without a lock, else a new one
    /// built from `state` and published. Building it fixes the store.
    var currentWriteConfiguration: WriteConfiguration {
        if let published = writeConfiguration.published { return published }
        return state.withLock { state in
            if let published = writeConfiguration.published { return published }
            let store = state.fixedStore ?? Self.chosenStore(&state, environment: ProcessInfo.processInfo.environment)
            state.fixedStore = store
            return writeConfiguration.publish(
                WriteConfiguration(
                    store: store, prefix: state.prefix, observer: state.observerToken, sharedKeys: state.sharedKeys,
                    syncImmediately: state.syncImmediately, keepsAssignedNil: store === state.developmentStore))
        }
    }
}
