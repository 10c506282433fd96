@testable import ObservableDefaults
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import Testing
import TestSupport
import TestEnvironment

/// The private directory for every suite the tests open (also `.standard` and suites opened by name): the
/// one `TestEnvironment` created and exported as `OBSERVABLE_DEFAULTS_DIRECTORY` when the test binary was
/// loaded, so nothing touches the user's configuration directory whatever test runs first.
let testDirectory: URL = {
    guard let path = od_test_suites_directory() else {
        fatalError("TestEnvironment did not set up the suites directory")
    }
    return URL(fileURLWithPath: String(cString: path), isDirectory: true)
}()

/// A fresh, uniquely named suite per test.
func makeSuite(_ function: String = #function) throws -> DefaultsSuite {
    try DefaultsSuite(
        name: "macro-tests-\(function.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)",
        directory: testDirectory)
}

/// A change made outside this process: the suite's file edited the way an editor does it (read as it is on
/// disk, changed, and a new file renamed over the old one), so it arrives through the file watcher like
/// another process's write or a hand edit. Starting from the file rather than the suite's memory keeps an
/// earlier outside change the watcher has not read yet.
func writeOutside(_ suite: DefaultsSuite, _ changes: [String: DefaultsValue?]) {
    var values: [String: DefaultsValue] = [:]
    if let bytes = FileManager.default.contents(atPath: suite.fileURL.path) {
        values = try! suite.format.decode(bytes, fileURL: suite.fileURL).stringKeyed
    }
    for (key, value) in changes { values[key] = value }
    let temporary = suite.fileURL.deletingLastPathComponent().appendingPathComponent(".edit-\(UUID().uuidString)")
    try! suite.format.encode(values.exactKeyed).write(to: temporary)
    precondition(rename(temporary.path, suite.fileURL.path) == 0)
}

/// Proves that every outside change made so far has been fully handled, so a test can then check that
/// something did *not* happen (no notification, no update) instead of sleeping and hoping.
///
/// It observes a marker key nobody else uses, on the same suite and hearing outside changes (which also
/// makes the suite watched when the object under test does not listen). ``settle(_:)`` changes the marker
/// through the same path as the change under test and waits until that change has been delivered. The
/// watcher thread reads a suite's file and calls its observers one change at a time, in order; but it
/// drains the events queued so far into one read, so a marker written soon after the change under test
/// can arrive in the same change as its keys, and the observers of one change are called in no fixed
/// order. Hence the marker is changed twice: the first delivery proves the file written before it has
/// been read, the second (a separate read, started after the first read's observers were all called)
/// proves every handler called for it has returned.
///
/// Create it before the change under test; the observation ends when it is released.
final class OutsideMarker: Sendable {
    let key: String
    private let suite: DefaultsSuite
    /// Fires once per delivered change of the marker.
    private let delivered = ChangeFlag()
    private let written = Mutex(0)
    private let observation: DefaultsObservation

    init(_ suite: DefaultsSuite, key: String = "marker") {
        self.key = key
        self.suite = suite
        observation = suite.observe(keys: [key], scope: .allProcesses) { [delivered] _ in delivered.fire() }
    }

    /// Changes the marker twice with `write` (which must make an outside change of `key` to the given integer
    /// the same way the change under test was made) and waits until both changes have been delivered.
    /// - Returns: whether they were (bounded polling; `false` after the timeout).
    func settle(
        isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(10),
        _ write: (_ key: String, _ value: Int) throws -> Void
    ) async rethrows -> Bool {
        for _ in 0..<2 {
            let next = written.withLock { count in
                count += 1
                return count
            }
            try write(key, next)
            guard await eventually(timeout: timeout, { delivered.count >= next }) else { return false }
        }
        return true
    }

    /// ``settle(_:)`` with the marker written by ``writeOutside(_:_:)``.
    func settle(isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(10)) async -> Bool {
        await settle(timeout: timeout) { key, value in writeOutside(suite, [key: .integer(value)]) }
    }
}

/// A thread-safe event log.
final class EventLog: Sendable {
    private let state = Mutex<[String]>([])
    var events: [String] { state.withLock { $0 } }
    func append(_ event: String) { state.withLock { $0.append(event) } }
}
