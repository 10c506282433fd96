import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Changes reach a store's observers in the order they happened, each once, also when the watch's thread
/// delivers server changes itself while this process writes through the same store.
@Suite(.serialized, EtcdCluster.required) struct EtcdDeliveryOrderTests {
    let directory = TemporaryDirectory()

    @Test func serverChangesAndLocalWritesInterleavedAreHeardInOrderEachOnce() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let observed = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("observed"))
        let other = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("other"))
        #expect(observed.synchronize(timeout: 20) && other.synchronize(timeout: 20))

        // The channel of `@ObservableCloud` objects (hears this process's writes too) and a public observer.
        let heard = Locked<[Set<String>]>([])
        let token = observed.core.addObserver(
            .init(
                filter: DefaultsKeyFilter(keys: ["s", "l"], prefix: nil),
                handler: { change in
                    // A slow observer of local writes: the next server change arrives while one is being
                    // delivered, and must wait for it rather than be delivered beside it.
                    if change.keys.contains("l") { usleep(3000) }
                    heard.withLock { $0.append(change.keys) }
                },
                hearsLocalWrites: true))
        defer { observed.core.removeObserver(token) }
        let public_ = CloudRecorder()
        let observation = observed.observe(keys: ["s", "l"]) { public_.record($0) }
        defer { observation.cancel() }

        // Ping-pong: the other machine writes s = i once the observed one wrote l = i - 1; the observed one
        // writes l = i as soon as its memory has s = i (its watch has applied it, and may still be
        // delivering it). So the observed store's changes strictly alternate: s1, l1, s2, l2, …
        let rounds = 100
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            for index in 1...rounds {
                other.set(Int64(index), forKey: "s")
                if !eventually(timeout: .seconds(15), { observed.longLong(forKey: "l") == index }) {
                    failures.withLock { $0.append("l = \(index) never came") }
                    return
                }
            }
        }
        DispatchQueue.global().async(group: group) {
            for index in 1...rounds {
                if !eventually(timeout: .seconds(15), { observed.longLong(forKey: "s") >= index }) {
                    failures.withLock { $0.append("s = \(index) never arrived") }
                    return
                }
                observed.set(Int64(index), forKey: "l")
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(observed.synchronize(timeout: 20))  // and every change found so far delivered

        let sequence = heard.withLock { $0 }
        let expected = (0..<rounds).flatMap { _ in [Set(["s"]), Set(["l"])] }
        #expect(sequence.count == 2 * rounds, "heard \(sequence.count) changes, expected \(2 * rounds)")
        if let first = zip(sequence, expected).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record(
                "change \(first.offset) was \(first.element.0), expected \(first.element.1): out of order or twice")
        }
        // The watch's thread delivered server changes itself (no hand-off to the delivery queue), at least
        // some of the time (when nothing else was being delivered).
        let byWatch = observed.core.deliveriesRunByFinders
        print(
            "cloud delivery order: \(byWatch) delivery runs made by the thread that found the change, for \(2 * rounds) changes"
        )
        #expect(byWatch > 0)
        // Public observers hear the server changes only, each once.
        #expect(public_.changes.map(\.keys) == Array(repeating: ["s"], count: rounds))
        #expect(observed.longLong(forKey: "s") == Int64(rounds))
        // The other machine hears the last `l` through its own watch, some time after the upload landed.
        #expect(
            eventually { other.longLong(forKey: "l") == Int64(rounds) }, "the other machine never heard l = \(rounds)")
    }
}
