import Foundation
import Testing
import TestSupport
@testable import ObservableDefaults

/// `CloudKeyValueStore.update(forKey:_:)` against real etcd: a compare-and-swap loop online, applied at once
/// and run again on the server's value at upload when offline.
@Suite(.serialized, EtcdCluster.required) struct EtcdAtomicUpdateTests {
    let directory = TemporaryDirectory()

    /// `processes` agents each incrementing `counter` `increments` times through `endpointLists[i % count]`;
    /// `during` runs once the server's count passed `duringAt`. Returns the seconds the run took.
    private func incrementTogether(
        endpointLists: [[URL]], namespace: String, processes: Int = 8, increments: Int = 500,
        duringAt: Int? = nil, during: () -> Void = {}
    ) throws -> Double {
        let started = ContinuousClock.now
        var agents: [(Process, Pipe)] = []
        for index in 0..<processes {
            let endpoints = endpointLists[index % endpointLists.count].map(\.absoluteString).joined(separator: ",")
            agents.append(
                try TestAgent.start([
                    "cloud", endpoints, namespace, directory.file("agent\(index)").path, "increment", "counter",
                    String(increments)
                ]))
        }
        defer { for (agent, _) in agents where agent.isRunning { agent.terminate() } }
        if let duringAt {
            let reader = endpointLists[0].last!
            #expect(
                eventually(timeout: .seconds(120)) {
                    (try? rawEtcdValue(reader, namespace, "counter")).flatMap { $0.flatMap { Int($0) } } ?? 0
                        >= duringAt
                })
            during()
        }
        for (agent, _) in agents { agent.waitUntilExit() }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        for (index, (agent, output)) in agents.enumerated() {
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(agent.terminationStatus == 0, "agent \(index): \(printed)")
        }
        return seconds
    }

    @Test func eightProcessesIncrementingOneKeyCountExactlyOnOneNode() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let seconds = try incrementTogether(endpointLists: [etcd.endpoints], namespace: namespace)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "counter") == "4000")
        print(
            "cloud atomic update: 8 processes x 500 increments on one node = \(try rawEtcdValue(etcd.endpoints[0], namespace, "counter") ?? "nil") in \(seconds) s"
        )
        let reader = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("reader"))
        #expect(reader.synchronize())
        #expect(reader.longLong(forKey: "counter") == 4000)
        // the markers are not values
        #expect(reader.values().keys.allSatisfy { !$0.hasPrefix(".observable-defaults") })
    }

    @Test func eightProcessesIncrementingOneKeyCountExactlyWhileAMemberIsKilled() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let endpoints = cluster.endpoints
        // Every agent starts on another member than the next; the member killed serves a third of them.
        let orders = [
            [endpoints[0], endpoints[1], endpoints[2]], [endpoints[1], endpoints[2], endpoints[0]],
            [endpoints[2], endpoints[0], endpoints[1]]
        ]
        let seconds = try incrementTogether(endpointLists: orders, namespace: namespace, duringAt: 1_000) {
            cluster.kill(0)
        }
        #expect(try rawEtcdValue(endpoints[1], namespace, "counter") == "4000")
        print(
            "cloud atomic update: 8 processes x 500 increments on 3 members, one killed at 1000 = \(try rawEtcdValue(endpoints[1], namespace, "counter") ?? "nil") in \(seconds) s"
        )
    }

    @Test func anUpdateRunsOnTheServersValueAndIsHeardOnceElsewhere() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let heardByA = CloudRecorder(), heardByB = CloudRecorder()
        let observations = [a.observe { heardByA.record($0) }, b.observe { heardByB.record($0) }]
        defer { observations.forEach { $0.cancel() } }

        #expect(try a.update(Int.self, forKey: "n") { ($0 ?? 0) + 1 } == 1)
        #expect(a.longLong(forKey: "n") == 1)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == "1")  // on the server when it returns
        #expect(heardByB.waitFor(key: "n"))
        #expect(b.longLong(forKey: "n") == 1)

        // Another writer changes the key behind a's back (raw, so a may not have heard it yet): the update
        // still runs on the server's value.
        try rawEtcdPut(etcd.endpoints[0], namespace, "n", "10")
        #expect(try a.update(Int.self, forKey: "n") { ($0 ?? 0) + 1 } == 11)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == "11")
        #expect(eventually { b.longLong(forKey: "n") == 11 })

        // A removal through nil, and a value JSON cannot hold is refused with nothing changed.
        #expect(try a.update(forKey: "n") { _ in nil } == nil)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == nil)
        #expect(throws: DefaultsError.self) { try a.update(forKey: "bad") { _ in .double(.nan) } }
        #expect(a.value(forKey: "bad") == nil)
        #expect(throws: DefaultsError.self) { try a.update(forKey: ".observable-defaults/x") { _ in .integer(1) } }
        #expect(a.synchronize() && b.synchronize())
        // a hears none of its own updates; b never hears a marker.
        #expect(heardByA.changes.allSatisfy { !$0.keys.contains("n") || $0.reason == .serverChange })
        #expect(
            heardByB.changes.allSatisfy { change in change.keys.allSatisfy { !$0.hasPrefix(".observable-defaults") } })
        #expect(!a.hasPendingChanges)
    }

    @Test func anUpdateFoldsInTheKeysUnsentWrite() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        #expect(a.synchronize())
        a.set(5, forKey: "n")
        #expect(try a.update(Int.self, forKey: "n") { ($0 ?? 0) * 2 } == 10)
        #expect(a.synchronize())
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == "10")
    }

    @Test func offlineUpdatesApplyAtOnceAndRunAgainOnTheServersValueWhenUploaded() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        let cutOff = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: directory.file("cut-off"))
        try here.update(Int.self, forKey: "count") { _ in 10 }
        #expect(eventually { cutOff.longLong(forKey: "count") == 10 })
        let heard = CloudRecorder()
        let observation = cutOff.observe { heard.record($0) }
        defer { observation.cancel() }

        cluster.kill(2)  // the cut-off machine's only member
        #expect(cutOff.synchronize(timeout: 1) == false)
        let offlineStart = ContinuousClock.now
        #expect(try cutOff.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } == 11)  // at once, in memory
        #expect(try cutOff.update(Int.self, forKey: "count") { ($0 ?? 0) + 1 } == 12)
        #expect(ContinuousClock.now - offlineStart < .seconds(1))
        #expect(cutOff.hasPendingChanges)
        #expect(try here.update(Int.self, forKey: "count") { ($0 ?? 0) + 5 } == 15)  // meanwhile, elsewhere

        try cluster.restart(2)
        #expect(cutOff.synchronize(timeout: 20))
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "count") == "17")  // 10 + 5 + 1 + 1: nothing lost
        #expect(cutOff.longLong(forKey: "count") == 17)
        #expect(eventually { here.longLong(forKey: "count") == 17 })
        #expect(heard.waitFor(key: "count", reason: .serverChange))  // 12 became 17: from elsewhere
        #expect(!cutOff.hasPendingChanges)
    }

    @Test func anOfflineUpdateWhoseResultOnTheServersValueIsPastTheLimitsIsReportedAndTheServerWins() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let limits = CloudLimits(
            maximumKeyCount: 10, maximumTotalBytes: 100, maximumValueBytes: 20, maximumKeyBytes: 64)
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        let cutOff = try cloudMachine(
            [cluster.endpoints[2]], namespace: namespace, state: directory.file("cut-off"), limits: limits)
        here.set("a", forKey: "s")
        #expect(here.synchronize())
        #expect(eventually { cutOff.string(forKey: "s") == "a" })
        let errors = ErrorRecorder()
        let observation = cutOff.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        let heard = CloudRecorder()
        let changes = cutOff.observe { heard.record($0) }
        defer { changes.cancel() }

        cluster.kill(2)
        #expect(cutOff.synchronize(timeout: 1) == false)
        #expect(try cutOff.update(String.self, forKey: "s") { ($0 ?? "") + "b" } == "ab")  // 4 bytes: fits
        let longest = String(repeating: "x", count: 18)  // 20 bytes: just fits
        here.set(longest, forKey: "s")
        #expect(here.synchronize())
        try cluster.restart(2)

        // Run again on the server's value, the update makes 21 bytes: not stored, and said so.
        #expect(cutOff.synchronize(timeout: 20))
        #expect(errors.waitFor("the update ran again on the server's value at upload"))
        #expect(errors.errors.contains { $0.key == "s" && $0.kind == .unsupportedValue })
        #expect(heard.waitFor(key: "s", reason: .quotaViolation))
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "s") == "\"\(longest)\"")
        #expect(cutOff.string(forKey: "s") == longest)
        #expect(!cutOff.hasPendingChanges)
    }

    @Test func anOfflineUpdateOfAnEndedProcessIsUploadedAsAValueOrReportedLost() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        here.set(1, forKey: "kept")
        here.set(1, forKey: "lost")
        #expect(here.synchronize())
        let state = directory.file("ended")
        do {
            let ended = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: state)
            #expect(ended.synchronize())
            cluster.kill(2)
            #expect(ended.synchronize(timeout: 1) == false)
            try ended.update(Int.self, forKey: "kept") { ($0 ?? 0) + 1 }
            try ended.update(Int.self, forKey: "lost") { ($0 ?? 0) + 1 }
        }  // released: its local copy holds the values, not the transforms
        here.set(7, forKey: "lost")
        #expect(here.synchronize())
        try cluster.restart(2)

        let next = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: state)
        let errors = ErrorRecorder()
        let observation = next.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(next.synchronize(timeout: 20))
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "kept") == "2")  // nobody changed it: uploaded
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "lost") == "7")  // changed meanwhile: the server wins
        #expect(next.longLong(forKey: "lost") == 7)
        #expect(errors.waitFor("the update's transform ended with that process"))
        #expect(errors.errors.contains { $0.key == "lost" })
    }

    @Test func anUpdateWhoseAnswerWasLostIsCountedOnce() throws {
        let etcd = try EtcdCluster.sharedNode()
        let proxy = try DroppingProxy(forwardingTo: etcd.endpoints[0], dropAnswerTo: "/v3/kv/txn")
        defer { proxy.stop() }
        let namespace = freshNamespace()
        // The proxy finds the transaction in the request's text: the gateway's (an HTTP/2 request's path is
        // HPACK-coded). What is tested is the store's marker, the same over either transport.
        let store = try cloudMachine(
            [proxy.url], namespace: namespace, state: directory.file("a"), transport: .gateway)
        let other = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(store.synchronize(timeout: 20) && other.synchronize())

        // The member carries the update out, the answer is lost, and the store cannot reach it again: the
        // update applies locally, with its transaction to be checked.
        #expect(try store.update(Int.self, forKey: "n") { ($0 ?? 0) + 1 } == 1)
        #expect(proxy.waitUntilAnswerSwallowed())
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == "1")
        // Another machine increments too. Sent again, the lost transaction meets 2 — a value that its own +1
        // and another's +1 both explain: only its marker tells that it was carried out.
        #expect(try other.update(Int.self, forKey: "n") { ($0 ?? 0) + 1 } == 2)
        proxy.release()
        #expect(store.synchronize(timeout: 20))
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "n") == "2")
        #expect(eventually { store.longLong(forKey: "n") == 2 })
        #expect(!store.hasPendingChanges)
    }

    @Test func anObjectsUpdateReachesAnotherMachinesObject() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let here = CloudFleet(store: a), there = CloudFleet(store: b)
        let heardThere = track { _ = there.workers }
        #expect(try here.update(\.workers) { $0 + 1 } == 5)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "fleet_workers") == "5")
        #expect(eventually { there.workers == 5 })
        #expect(heardThere.fired)
        #expect(try there.update(\.workers) { $0 * 10 } == 50)
        #expect(eventually { here.workers == 50 })
        here.performBatchUpdates {
            here.logLevel = "debug"
            here.hosts = ["a", "b"]
        }
        #expect(eventually { there.logLevel == "debug" && there.hosts == ["a", "b"] })
        let revisions = try ["fleet_log-level", "fleet_hosts"].map {
            try rawEtcdModRevision(etcd.endpoints[0], namespace, $0)
        }
        #expect(revisions[0] != nil && revisions[0] == revisions[1])
    }
}
