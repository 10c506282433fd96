import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A store's probe PINGs its member's connection, and gRPC servers police PINGs (etcd allows one every
/// 5 seconds, `etcd grpc-proxy` keeps gRPC's default of one every 5 minutes; three too soon and the server
/// closes the connection with GOAWAY 'too_many_pings'). An idle store must keep its watch on a member, and
/// through a proxy it resumes quietly and spaces its PINGs further apart (``EtcdGRPCPingPacing``).
@Suite(.serialized, EtcdCluster.required) struct EtcdKeepaliveTests {
    let directory = TemporaryDirectory()

    /// How many Watch streams the etcd member or proxy at `endpoint` has begun (`grpc_server_started_total`).
    private func watchStreamsStarted(_ endpoint: URL) -> Int? {
        guard let metrics = etcdGet(endpoint, "/metrics") else { return nil }
        let prefix = #"grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch""#
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
    }

    @Test func anIdleStoreKeepsItsWatchOnTheMember() throws {
        let cluster = try EtcdCluster(members: 1)
        let member = cluster.endpoints[0]
        // Probed every half second (the tests' setting): before pacing, the member closed its connection
        // after four PINGs, about every two seconds.
        let namespace = freshNamespace()
        let store = try cloudMachine([member], namespace: namespace, state: directory.file("idle"))
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))
        // A synchronized store may still be sending its watch's create: the count begins once the member
        // holds the watch.
        #expect(eventually { etcdWatcherCount(member) == 1 }, "watchers \(etcdWatcherCount(member) ?? -1)")
        let started = try #require(watchStreamsStarted(member))
        // Long enough for three PINGs at etcd's pace: the connection closed over pings (an error saying the
        // watch ended) fails the test. A PING not answered within the probe's timeout on a loaded machine
        // is the hung-member check doing its job, not the pacing's failure: it may make one new watch.
        let closed = eventually(timeout: .seconds(14)) {
            errors.items.contains { !$0.message.contains("does not answer") }
        }
        #expect(!closed, "\(errors.items)")
        let hungReports = errors.items.filter { $0.message.contains("does not answer") }.count
        #expect(
            (watchStreamsStarted(member) ?? -1) <= started + hungReports,
            "watches begun: \(watchStreamsStarted(member) ?? -1) (were \(started)); \(errors.items)")
        #expect(try rawEtcdPut(member, namespace, "after", "\"idle\""))
        #expect(eventually { store.string(forKey: "after") == "idle" })
    }

    @Test func throughAProxyAGoAwayOverPingsIsResumedQuietly() throws {
        let cluster = try EtcdCluster(members: 1)
        let proxy = try EtcdGRPCProxy(members: cluster.endpoints, executable: EtcdCluster.executable)
        defer { proxy.stop() }
        let namespace = freshNamespace()
        let store = try cloudMachine([proxy.endpoint], namespace: namespace, state: directory.file("proxied"))
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize(timeout: 20))
        let log = proxy.directory.appendingPathComponent("proxy.log")
        // The proxy allows a PING every 5 minutes: the fourth, about 18 s in, ends the connection.
        #expect(
            eventually(timeout: .seconds(60)) {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("too many pings")
            }, "the proxy never closed the connection over pings")
        #expect(try rawEtcdPut(cluster.endpoints[0], namespace, "after", "\"resumed\""))
        #expect(eventually(timeout: .seconds(20)) { store.string(forKey: "after") == "resumed" })
        // A PING unanswered in time on a loaded machine is the hung-member check's, not the resumption's.
        #expect(!errors.items.contains { !$0.message.contains("does not answer") }, "\(errors.items)")
    }
}
