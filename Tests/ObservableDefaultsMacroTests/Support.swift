@testable import ObservableDefaults
import Foundation
import Synchronization
import Testing

/// A fresh, uniquely named suite per test.
func makeSuite(_ function: String = #function) throws -> DefaultsSuite {
    try DefaultsSuite(name: "macro-tests-\(function.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)")
}

/// A change made outside this process (another process or a person editing the file).
func writeOutside(_ suite: DefaultsSuite, _ values: [String: DefaultsValue?]) {
    suite.simulateOutsideChange(values)
}

/// Records whether an Observation change handler fired.
final class ChangeFlag: Sendable {
    private let state = Mutex(0)
    var count: Int { state.withLock { $0 } }
    var fired: Bool { count > 0 }
    func fire() { state.withLock { $0 += 1 } }
}

/// Starts tracking what `read` accesses; the flag fires on the first change.
func track(_ read: () -> Void) -> ChangeFlag {
    let flag = ChangeFlag()
    withObservationTracking(read) { flag.fire() }
    return flag
}

/// Waits until `condition` holds (outside changes may arrive on another thread).
func eventually(
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(2), _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A thread-safe event log.
final class EventLog: Sendable {
    private let state = Mutex<[String]>([])
    var events: [String] { state.withLock { $0 } }
    func append(_ event: String) { state.withLock { $0.append(event) } }
}
