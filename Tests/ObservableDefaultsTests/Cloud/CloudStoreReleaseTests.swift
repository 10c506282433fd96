import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A store or suite whose last reference is held by its own handler (`store.observe { … store … }`, a common
/// way to write one) is released when the observation is cancelled: its deinit (saving the local copy,
/// clearing its errors) runs after the observers' lock is released, not inside it, where it would wait for
/// that lock forever.
@Suite struct CloudStoreReleaseTests {
    let directory = TemporaryDirectory()

    enum Handler: String, CaseIterable, Sendable {
        case changeObserver, errorHandler
    }

    @Test(arguments: Handler.allCases)
    func aStoreHeldOnlyByItsOwnHandlerIsReleasedWhenItsObservationIsCancelled(_ handler: Handler) {
        let url = directory.url
        #expect(
            finishes {
                var observation: DefaultsObservation?
                do {
                    let store = CloudKeyValueStore.localOnly(directory: url)
                    store.set(1, forKey: "n")  // a write for the local copy to save at release
                    switch handler {
                    case .changeObserver: observation = store.observe { _ in _ = store.longLong(forKey: "n") }
                    case .errorHandler: observation = store.observeErrors { _ in _ = store.longLong(forKey: "n") }
                    }
                }
                observation?.cancel()
            }, "cancelling the observation of a store held only by its \(handler) did not return")
    }

    @Test func aSuiteHeldOnlyByItsOwnErrorHandlerIsReleasedWhenItsObservationIsCancelled() throws {
        let url = directory.file("held.json")
        #expect(
            finishes {
                var observation: DefaultsObservation?
                do {
                    guard let suite = try? DefaultsSuite(fileURL: url) else { return }
                    suite.set(.integer(1), forKey: "n")
                    observation = suite.observeErrors { _ in _ = suite.integer(forKey: "n") }
                }
                observation?.cancel()
            })
    }

    /// Whether `body` returns within 20 s on a thread of its own (a deadlocked one is left waiting).
    private func finishes(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + 20) == .success
    }
}
