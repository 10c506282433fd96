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

/// Records what an observation or an error channel delivers, from any thread, in order.
package final class Recorder<Item: Sendable>: Sendable {
    private let received = Mutex<[Item]>([])

    package init() {}

    /// Everything recorded so far.
    package var items: [Item] { received.withLock { $0 } }

    package func record(_ item: Item) { received.withLock { $0.append(item) } }

    package func clear() { received.withLock { $0.removeAll() } }
}

/// Records every change a suite observation delivers.
package typealias ChangeRecorder = Recorder<DefaultsChange>
/// Records every change a cloud observation delivers.
package typealias CloudRecorder = Recorder<CloudChange>
/// Records the errors published on an error channel (a suite's or a cloud store's).
package typealias ErrorRecorder = Recorder<DefaultsError>
/// Records the events of an error channel (errors and recoveries).
package typealias ErrorEventRecorder = Recorder<DefaultsErrorEvent>

extension Recorder where Item: KeyedChange {
    package var changes: [Item] { items }

    /// The changes before the marker `marker` (see ``changes(_:before:)``).
    package func changes(before marker: String) -> [Item] {
        TestSupport.changes(items, before: marker)
    }
}

extension Recorder<DefaultsChange> {
    /// Waits until a change containing `key` has arrived.
    package func waitFor(key: String, timeout: Duration = .seconds(10)) -> Bool {
        eventually(timeout: timeout) { items.contains { $0.keys.contains(key) } }
    }
}

extension Recorder<CloudChange> {
    /// Waits until a change containing `key` (with `reason`, if given) has arrived.
    package func waitFor(key: String, reason: CloudChangeReason? = nil, timeout: Duration = .seconds(15)) -> Bool {
        eventually(timeout: timeout) {
            items.contains { $0.keys.contains(key) && (reason == nil || $0.reason == reason) }
        }
    }
}

extension Recorder<DefaultsError> {
    package var errors: [DefaultsError] { items }

    /// Waits until an error whose description contains `text` has arrived.
    package func waitFor(_ text: String, timeout: Duration = .seconds(15)) -> Bool {
        eventually(timeout: timeout) { items.contains { $0.description.contains(text) } }
    }
}

extension Recorder<DefaultsErrorEvent> {
    package var events: [DefaultsErrorEvent] { items }
    package var occurred: [DefaultsError] {
        items.compactMap { if case .occurred(let error) = $0 { error } else { nil } }
    }
    package var recovered: [DefaultsError] {
        items.compactMap { if case .recovered(let error) = $0 { error } else { nil } }
    }
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
        state.withLock {
            $0.count += 1; $0.onMain.append(onMain)
        }
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
