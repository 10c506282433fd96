import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Requests over kept-alive connections, and a write whose connection broke after the member carried it out.
@Suite(.serialized, EtcdCluster.required) struct EtcdKeptConnectionTests {
    let directory = TemporaryDirectory()

    @Test func requestsToAMemberReuseOneKeptAliveConnection() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(
            etcd.endpoints, namespace: namespace, state: directory.file("a"), transport: .gateway)
        #expect(store.synchronize(timeout: 20))
        let pool = try #require((store.sync?.client.wire as? EtcdGatewayWire)?.connections)
        let before = pool.reuses.withLock { $0 }
        for index in 0..<20 {
            store.set(Int64(index), forKey: "k")
            #expect(store.synchronize(timeout: 20))
        }
        let reused = pool.reuses.withLock { $0 } - before
        #expect(reused >= 20, "only \(reused) of 20 uploads went over a kept connection")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "19")
        #expect(store.currentErrors.isEmpty)
    }

    /// `whileWaiting` (where the sync thread saves a write's local copy) runs once per request: before
    /// connecting, or after sending on a kept connection; also for a member that refuses the connection.
    @Test func whileWaitingRunsOncePerRequestWhetherConnectingOrReusing() throws {
        let etcd = try EtcdCluster.sharedNode()
        let pool = EtcdConnectionPool()
        let transport = EtcdTransport()
        let url = etcd.endpoints[0].appendingPathComponent("/v3/maintenance/status")
        var calls = 0
        for request in 0..<3 {
            let outcome = EtcdHTTP.post(
                url: url, body: Data("{}".utf8), headers: [:], timeout: 5, transport: transport, pool: pool,
                whileWaiting: { calls += 1 })
            guard case .answer(200, _) = outcome else {
                Issue.record("request \(request): \(outcome)")
                return
            }
            #expect(calls == request + 1)
        }
        #expect(pool.reuses.withLock { $0 } == 2, "the second and third request went over the kept connection")
        let refused = EtcdHTTP.post(
            url: URL(string: "http://127.0.0.1:1/v3/maintenance/status")!, body: Data("{}".utf8), headers: [:],
            timeout: 5,
            transport: transport, pool: pool, whileWaiting: { calls += 1 })
        guard case .unreachable(_, refused: true, _) = refused else {
            Issue.record("expected a refused connection: \(refused)")
            return
        }
        #expect(calls == 4)
    }

    /// Requests carry no `Expect: 100-continue`: the member answers at once, without an interim
    /// `100 Continue` that it would write and the client read on their own for every upload.
    @Test func requestsGetTheirAnswerWithoutAnInterimContinue() throws {
        let etcd = try EtcdCluster.sharedNode()
        let proxy = try DroppingProxy(forwardingTo: etcd.endpoints[0], dropAnswerTo: "no request contains this")
        defer { proxy.stop() }
        let namespace = freshNamespace()
        let store = try cloudMachine([proxy.url], namespace: namespace, state: directory.file("a"), transport: .gateway)
        #expect(store.synchronize(timeout: 20))
        for index in 0..<5 {
            store.set(Int64(index), forKey: "k")
            #expect(store.synchronize(timeout: 20))
        }
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "4")
        #expect(proxy.interimAnswerCount == 0, "the member sent \(proxy.interimAnswerCount) interim answers")
        #expect(store.currentErrors.isEmpty)
    }

    @Test func aWriteRepeatedAfterItsConnectionBrokeIsRecognisedAsItsOwn() throws {
        let etcd = try EtcdCluster.sharedNode()
        let proxy = try DroppingProxy(forwardingTo: etcd.endpoints[0], dropAnswerTo: "/v3/kv/txn")
        defer { proxy.stop() }
        let namespace = freshNamespace()
        let store = try cloudMachine([proxy.url], namespace: namespace, state: directory.file("a"), transport: .gateway)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))

        let errors = ErrorRecorder()
        let errorObservation = store.observeErrors { errors.record($0) }
        defer { errorObservation.cancel() }
        store.set(Int64(1), forKey: "k")
        #expect(proxy.waitUntilAnswerSwallowed())
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "1")  // carried out, answer lost
        #expect(errors.waitFor("cannot be reached"))  // the attempt failed: its outcome is unknown to the store
        store.set(Int64(2), forKey: "k")  // a newer write meanwhile
        proxy.release()
        #expect(store.synchronize(timeout: 20))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "k") == "2")
        #expect(store.longLong(forKey: "k") == 2)
        // The repeat found the store's own value: no conflict, no change announced.
        #expect(recorder.changes.isEmpty, "\(recorder.changes)")
    }
}
