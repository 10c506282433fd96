@testable import ObservableDefaults
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// One private directory for every suite the tests open by name (also `.standard`), so nothing touches
/// the user's configuration directory.
let testDirectory: URL = {
    let url = URL(fileURLWithPath: NSTemporaryDirectory())
        .appendingPathComponent("od-macro-tests-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    setenv("OBSERVABLE_DEFAULTS_DIRECTORY", url.path, 1)
    return url
}()

/// A fresh, uniquely named suite per test.
func makeSuite(_ function: String = #function) throws -> DefaultsSuite {
    try DefaultsSuite(name: "macro-tests-\(function.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)", directory: testDirectory)
}

/// A change made outside this process: the suite's file edited the way an editor does it (a new file renamed
/// over the old one), so it arrives through the file watcher like another process's write or a hand edit.
func writeOutside(_ suite: DefaultsSuite, _ changes: [String: DefaultsValue?]) {
    var values: [String: DefaultsValue] = [:]
    for key in suite.storedKeys { values[key] = suite.storedValue(forKey: key) }
    for (key, value) in changes { values[key] = value }
    let temporary = suite.fileURL.deletingLastPathComponent().appendingPathComponent(".edit-\(UUID().uuidString)")
    try! JSONWriter.encodeSuite(values).write(to: temporary)
    precondition(rename(temporary.path, suite.fileURL.path) == 0)
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
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(10), _ condition: () -> Bool
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
