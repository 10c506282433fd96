import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Over gRPC, a store's watch hands each event to the store on the thread that reads the member's connection
/// (``HTTP2Multiplexer/consume(_:with:)``), so observers run there. They may still call the store as any code
/// may — `set`, and `synchronize()`, which waits for an answer that comes on that very connection — without a
/// deadlock, and the watch goes on afterwards.
@Suite(.serialized, EtcdCluster.required) struct EtcdWatchOnReaderTests {
    let directory = TemporaryDirectory()

    @Test func anObserverThatWritesAndSynchronizesFromItsCallbackDoesNotDeadlockAndTheWatchGoesOn() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let observed = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("observed"))
        let other = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("other"))
        #expect(observed.synchronize(timeout: 20) && other.synchronize(timeout: 20))

        struct Heard: Sendable {
            var value: Int64
            var synchronized: Bool
        }
        let heard = Locked<[Heard]>([])
        let observation = observed.observe(keys: ["ping"]) { _ in
            let value = observed.longLong(forKey: "ping")
            observed.set(value, forKey: "pong")
            // Waits for the sync thread, whose upload is answered on the connection this thread reads.
            let synchronized = observed.synchronize(timeout: 20)
            heard.withLock { $0.append(Heard(value: value, synchronized: synchronized)) }
        }
        defer { observation.cancel() }

        for round in Int64(1)...3 {
            other.set(round, forKey: "ping")
            #expect(
                eventually(timeout: .seconds(30)) { heard.withLock { $0.count } == Int(round) },
                "round \(round): the observer did not finish (heard \(heard.withLock { $0.count }))")
            #expect(
                eventually(timeout: .seconds(30)) { other.longLong(forKey: "pong") == round },
                "round \(round): the observer's write did not reach the other machine")
        }
        let rounds = heard.withLock { $0 }
        #expect(rounds.map(\.value) == [1, 2, 3])
        #expect(rounds.map(\.synchronized) == [true, true, true], "synchronize() from the callback failed")
        // The thread that found a change delivered it (the case that could deadlock: the connection's reader).
        #expect(observed.core.deliveriesRunByFinders > 0)
    }
}
