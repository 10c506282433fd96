import Foundation
import Observation
@testable import ObservableDefaults

/// Whether (and how often, and whether on the main queue) an Observation change handler fired.
final class CloudPropertyFlag: Sendable {
    private let state = Locked<(count: Int, onMain: [Bool])>((0, []))
    var count: Int { state.withLock { $0.count } }
    var fired: Bool { count > 0 }
    var firedOnMain: [Bool] { state.withLock { $0.onMain } }
    func fire() { state.withLock { $0.count += 1; $0.onMain.append(MainQueue.isCurrent) } }
}

/// Tracks what `read` accesses; the flag fires on the first change.
func trackCloud(_ read: () -> Void) -> CloudPropertyFlag {
    let flag = CloudPropertyFlag()
    withObservationTracking(read) { flag.fire() }
    return flag
}

/// One flag per persisted or observable property of a ``CloudFleet``.
struct FleetFlags {
    let flags: [String: CloudPropertyFlag]

    init(_ fleet: CloudFleet) {
        flags = [
            "workers": trackCloud { _ = fleet.workers },
            "logLevel": trackCloud { _ = fleet.logLevel },
            "limit": trackCloud { _ = fleet.limit },
            "hosts": trackCloud { _ = fleet.hosts },
            "endpoint": trackCloud { _ = fleet.endpoint },
            "lastSeen": trackCloud { _ = fleet.lastSeen },
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
