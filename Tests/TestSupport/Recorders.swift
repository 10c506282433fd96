import Dispatch
import Foundation
import Observation
import ObservableDefaults
import Synchronization

/// A change with a set of keys: what ``changes(_:before:)`` reads.
package protocol KeyedChange {
    var keys: Set<String> { get set }
}

extension DefaultsChange: KeyedChange {}
extension CloudChange: KeyedChange {}

/// Every change in `changes` up to and including the first one containing `marker`, with the marker key
/// taken out (a change left empty is dropped).
///
/// This is how tests prove that nothing unexpected arrived: one observer's changes are delivered in order,
/// so once the marker is here every earlier event has been handled; and a change that was read together
/// with the marker (one file read can take in both) still counts.
package func changes<Change: KeyedChange>(_ changes: [Change], before marker: String) -> [Change] {
    var result: [Change] = []
    for var change in changes {
        let isMarker = change.keys.remove(marker) != nil
        if !change.keys.isEmpty { result.append(change) }
        if isMarker { break }
    }
    return result
}

/// Records every change a suite observation delivers, from any thread.
package final class ChangeRecorder: Sendable {
    private let received = Mutex<[DefaultsChange]>([])

    package init() {}

    package var changes: [DefaultsChange] { received.withLock { $0 } }

    package func record(_ change: DefaultsChange) { received.withLock { $0.append(change) } }

    package func clear() { received.withLock { $0.removeAll() } }

    /// Waits until a change containing `key` has arrived.
    package func waitFor(key: String, timeout: Duration = .seconds(10)) -> Bool {
        eventually(timeout: timeout) { changes.contains { $0.keys.contains(key) } }
    }

    /// The changes before the marker `marker` (see ``changes(_:before:)``).
    package func changes(before marker: String) -> [DefaultsChange] {
        TestSupport.changes(changes, before: marker)
    }
}

/// Records every change a cloud observation delivers, from any thread.
package final class CloudRecorder: Sendable {
    private let received = Mutex<[CloudChange]>([])

    package init() {}

    package var changes: [CloudChange] { received.withLock { $0 } }

    package func record(_ change: CloudChange) { received.withLock { $0.append(change) } }

    /// Waits until a change containing `key` (with `reason`, if given) has arrived.
    package func waitFor(key: String, reason: CloudChangeReason? = nil, timeout: Duration = .seconds(15)) -> Bool {
        eventually(timeout: timeout) { changes.contains { $0.keys.contains(key) && (reason == nil || $0.reason == reason) } }
    }

    /// The changes before the marker `marker` (see ``changes(_:before:)``).
    package func changes(before marker: String) -> [CloudChange] {
        TestSupport.changes(changes, before: marker)
    }
}

/// Records the errors published on an error channel (a suite's or a cloud store's), from any thread.
package final class ErrorRecorder: Sendable {
    private let received = Mutex<[DefaultsError]>([])

    package init() {}

    package var errors: [DefaultsError] { received.withLock { $0 } }

    package func record(_ error: DefaultsError) { received.withLock { $0.append(error) } }

    /// Waits until an error whose description contains `text` has arrived.
    package func waitFor(_ text: String, timeout: Duration = .seconds(15)) -> Bool {
        eventually(timeout: timeout) { errors.contains { $0.description.contains(text) } }
    }
}

/// Records the events of an error channel (errors and recoveries), from any thread.
package final class ErrorEventRecorder: Sendable {
    private let received = Mutex<[DefaultsErrorEvent]>([])

    package init() {}

    package var events: [DefaultsErrorEvent] { received.withLock { $0 } }
    package var occurred: [DefaultsError] { events.compactMap { if case .occurred(let error) = $0 { error } else { nil } } }
    package var recovered: [DefaultsError] { events.compactMap { if case .recovered(let error) = $0 { error } else { nil } } }

    package func record(_ event: DefaultsErrorEvent) { received.withLock { $0.append(event) } }
}

/// Whether (and how often, and whether on the main queue) an Observation change handler fired.
package final class ChangeFlag: Sendable {
    private let state = Mutex<(count: Int, onMain: [Bool])>((0, []))

    package init() {}

    package var count: Int { state.withLock { $0.count } }
    package var fired: Bool { count > 0 }
    /// For each firing, whether it ran on the main queue.
    package var firedOnMain: [Bool] { state.withLock { $0.onMain } }

    package func fire() {
        let onMain = DispatchQueue.getSpecific(key: mainQueueKey) == true
        state.withLock { $0.count += 1; $0.onMain.append(onMain) }
    }
}

/// Marks the main queue, so ``ChangeFlag`` can tell a handler that runs on it.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Starts tracking what `read` accesses; the flag fires on the first change.
package func track(_ read: () -> Void) -> ChangeFlag {
    let flag = ChangeFlag()
    _ = mainQueueKey
    withObservationTracking(read) { flag.fire() }
    return flag
}
