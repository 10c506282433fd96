import Foundation
import Testing
@testable import ObservableDefaults

/// Uploads a writing thread sends itself while the sync thread is idle (``EtcdSync/upload()``): they
/// arrive, in order, one request at a time, and `set` never waits for the network.
@Suite(.serialized, EtcdCluster.required) struct EtcdHandOverTests {
    let directory = TemporaryDirectory()

    /// Waits until the store's sync thread is idle: the next write is sent by the writing thread.
    private func waitUntilIdle(_ store: CloudKeyValueStore) -> Bool {
        eventually(timeout: .seconds(10)) { store.sync?.control.isIdleForTest == true }
    }

    @Test func aWriteWhileTheSyncThreadIsIdleIsSentByTheWritingThread() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let control = try #require(store.sync?.control)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))
        let before = control.handOversForTest
        for index in 0..<10 {
            #expect(waitUntilIdle(store))
            store.set(Int64(index), forKey: "k")
            #expect(eventually(timeout: .seconds(10)) { (try? rawEtcdValue(etcd.endpoints[0], namespace, "k")) == "\(index)" })
        }
        #expect(control.handOversForTest - before == 10)
        #expect(store.synchronize(timeout: 20))
        #expect(recorder.changes.isEmpty, "\(recorder.changes)")  // no conflict: every upload built on the one before
        #expect(store.currentErrors.isEmpty)
    }

    /// Two threads write the same and different keys at once: every upload builds on the key's previous one
    /// (a second request in flight, or one out of order, would fail its comparison and be announced as a
    /// server change), and the server ends with each key's last value.
    @Test func twoThreadsWritingAtOnceKeepTheOrderOfUploads() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let control = try #require(store.sync?.control)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))
        let before = control.handOversForTest
        let writes = 150
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for index in 0..<writes {
                store.set(Int64(index), forKey: "own\(thread)")
                store.set("\(thread)-\(index)", forKey: "shared")
                if index % 10 == 0 { usleep(2_000) }  // let the sync thread go idle now and then
            }
        }
        #expect(store.synchronize(timeout: 30))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "own0") == "\(writes - 1)")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "own1") == "\(writes - 1)")
        let shared = try #require(store.string(forKey: "shared"))
        #expect(shared.hasSuffix("-\(writes - 1)"))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "shared") == "\"\(shared)\"")
        #expect(control.handOversForTest > before, "no write was sent by its writing thread")
        #expect(recorder.changes.isEmpty, "\(recorder.changes)")
        #expect(store.currentErrors.isEmpty)
    }

    /// The member stops (SIGSTOP) after the writing thread sent an upload: `set` keeps returning at once,
    /// later writes wait for that upload's outcome instead of going out beside it, and everything
    /// arrives once the member runs again.
    @Test func writesWhileTheMemberIsStoppedReturnAtOnceAndArriveLater() throws {
        let etcd = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let control = try #require(store.sync?.control)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))
        #expect(waitUntilIdle(store))
        let before = control.handOversForTest
        etcd.pause(0)
        var slowest = Duration.zero
        for index in 0..<20 {
            let started = ContinuousClock.now
            store.set(Int64(index), forKey: "k\(index % 3)")
            slowest = max(slowest, ContinuousClock.now - started)
            usleep(20_000)
        }
        #expect(slowest < .milliseconds(100), "a set took \(slowest) while the member was stopped")
        // At most the first write goes out before the member answers (none when a probe found it stopped first).
        #expect(control.handOversForTest - before <= 1)
        etcd.pause(0, resume: true)
        #expect(store.synchronize(timeout: 30))
        for key in 0..<3 {
            let last = (0..<20).last { $0 % 3 == key }!
            #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k\(key)") == "\(last)")
        }
        #expect(recorder.changes.isEmpty, "\(recorder.changes)")
    }

    /// `synchronize()` called from another thread while writes are handed over: every call reports the
    /// writes before it on the server, and the last value arrives.
    @Test func writesInterleavedWithSynchronize() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        #expect(store.synchronize(timeout: 20))
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for index in 0..<60 {
                if thread == 0 {
                    store.set(Int64(index), forKey: "k")
                    if index % 4 == 0 { usleep(1_000) }
                } else if !store.synchronize(timeout: 20) {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        for index in 60..<70 {
            store.set(Int64(index), forKey: "k")
            #expect(store.synchronize(timeout: 20))
            #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "\(index)")
        }
        #expect(store.currentErrors.isEmpty)
    }
}
