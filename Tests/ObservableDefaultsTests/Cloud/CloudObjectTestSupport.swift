import Foundation
import Observation
@testable import ObservableDefaults
import TestSupport

/// One flag per persisted or observable property of a ``CloudFleet``.
struct FleetFlags {
    let flags: [String: ChangeFlag]

    init(_ fleet: CloudFleet) {
        flags = [
            "workers": track { _ = fleet.workers },
            "logLevel": track { _ = fleet.logLevel },
            "limit": track { _ = fleet.limit },
            "hosts": track { _ = fleet.hosts },
            "endpoint": track { _ = fleet.endpoint },
            "lastSeen": track { _ = fleet.lastSeen }
        ]
    }

    /// The properties whose observers heard a change.
    var fired: Set<String> { Set(flags.filter { $0.value.fired }.map(\.key)) }
}

/// A key prefix no other test uses (the development store is shared by the whole test process); short,
/// as keys are limited to 64 bytes.
func uniqueCloudPrefix() -> String {
    "t\(UInt32.random(in: 0 ... .max))_"
}

extension CloudKeyValueStore {
    /// Waits until every change announced so far has reached the objects on this store (their handlers run
    /// on the store's delivery queue; a development store has nothing to upload).
    func settle() { core.waitForDeliveries() }
}
