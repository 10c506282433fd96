import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Cloud stores while etcd members die, hang or restart, and while the cluster is replaced: each test has
/// its own etcd processes.
@Suite(.serialized, EtcdCluster.required) struct EtcdFailureTests {
    let directory = TemporaryDirectory()

    @Test func killingTheWatchedMemberLosesNoneOfAnotherProcesssHundredWrites() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let watcher = try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("watcher"))
        #expect(watcher.synchronize())
        let arrivals = Locked<[(keys: Set<String>, at: ContinuousClock.Instant)]>([])
        let observation = watcher.observe { change in arrivals.withLock { $0.append((change.keys, .now)) } }
        defer { observation.cancel() }

        // The writer talks to another member than the one the watcher watches (m0).
        let writerEndpoints = [cluster.endpoints[1], cluster.endpoints[2], cluster.endpoints[0]].map(\.absoluteString)
        let (writer, _) = try TestAgent.start([
            "cloud", writerEndpoints.joined(separator: ","), namespace, directory.file("writer").path, "write-series",
            "v", "100"
        ])
        #expect(eventually { arrivals.withLock { $0.count } >= 20 })
        let status = try synchronousPost(cluster.endpoints[0], "/v3/maintenance/status", "{}") ?? ""
        let memberID = status.split(separator: "\"member_id\":\"").dropFirst().first?.split(separator: "\"").first
        let wasLeader = memberID != nil && status.contains("\"leader\":\"\(memberID!)\"")
        cluster.kill(0)
        let killedAt = ContinuousClock.now
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(
            eventually(timeout: .seconds(20)) {
                (0..<100).allSatisfy { watcher.longLong(forKey: "v\($0)") == Int64($0) }
            })

        // Every value arrived once, in order (changes in one watch message may share an event).
        let indices = arrivals.withLock { $0 }.map { $0.keys.map { Int($0.dropFirst())! }.sorted() }
        #expect(indices.flatMap { $0 } == Array(0..<100))
        let firstAfterKill = arrivals.withLock { $0 }.first { $0.at > killedAt }?.at
        if let firstAfterKill {
            print(
                "cloud fail-over gap: \(firstAfterKill - killedAt) from kill -9 of the watched member (\(wasLeader ? "the leader" : "a follower")) to the next value"
            )
        }
    }

    @Test func aHungWatchedMemberIsFoundByProbingAndTheWatchMovesOn() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let watcher = try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("watcher"))
        let writer = try cloudMachine(
            [cluster.endpoints[1], cluster.endpoints[2]], namespace: namespace, state: directory.file("writer"))
        expectHungWatchedMemberLeftBehind(cluster, watcher: watcher, writer: writer, label: "cloud hung-member gap")
    }

    @Test func whileEveryMemberIsDownWritesAreKeptAndReconciledAfterTheRestart() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let store = try cloudMachine(cluster.endpoints, namespace: namespace, state: directory.file("a"))
        let events = ErrorEventRecorder()
        let observation = store.observeErrorEvents { events.record($0) }
        defer { observation.cancel() }
        store.set(1, forKey: "x")
        #expect(store.synchronize())

        for index in 0..<3 { cluster.kill(index) }
        store.set(2, forKey: "x")
        store.set("kept", forKey: "y")
        #expect(store.longLong(forKey: "x") == 2)  // the app keeps working on its values
        #expect(store.synchronize(timeout: 1) == false)
        #expect(store.hasPendingChanges)
        // The members die one after the other: the store may fail over, and recover, in between. Each
        // outage is one published error (the watch's end, first) and its latest form is current: every
        // error published but the last was followed by its recovery.
        #expect(
            eventually { store.currentErrors.contains { $0.description.contains("cannot be reached") } },
            "\(store.currentErrors)")
        #expect(eventually { events.occurred.count == events.recovered.count + 1 }, "\(events.events)")
        let onDisk = try localCopyOnDisk(try #require(store.localCopyURL))
        #expect(onDisk["pending"]?.dictionaryValue?.keys.sorted() == ["x", "y"])

        for index in 0..<3 { try cluster.restart(index, waitForHealth: false) }
        for index in 0..<3 { try cluster.waitUntilHealthy(index) }
        #expect(eventually(timeout: .seconds(20)) { !store.hasPendingChanges })
        #expect(try rawEtcdValue(cluster.endpoints[1], namespace, "x") == "2")
        #expect(try rawEtcdValue(cluster.endpoints[2], namespace, "y") == #""kept""#)
        #expect(
            eventually { store.currentErrors.isEmpty && events.occurred.count == events.recovered.count },
            "\(events.events)")
    }

    /// The gateway ends a watch on a member that lost its leader with an error object that has no newline
    /// after it (then closes the stream): its words reach the error channel, and once the quorum is back
    /// nothing written meanwhile is missed in either direction.
    @Test func aWatchedMemberWithoutALeaderEndsTheWatchWithItsMessageAndNothingIsMissed() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let alone = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("alone"))
        let other = try cloudMachine(
            [cluster.endpoints[1], cluster.endpoints[2]], namespace: namespace, state: directory.file("other"))
        alone.set(1, forKey: "before")
        #expect(alone.synchronize())
        #expect(eventually { other.longLong(forKey: "before") == 1 })
        let errors = ErrorRecorder(), heard = CloudRecorder()
        let observations = [alone.observeErrors { errors.record($0) }, alone.observe { heard.record($0) }]
        defer { observations.forEach { $0.cancel() } }

        cluster.kill(1)
        cluster.kill(2)  // member 0 keeps running, without a leader
        #expect(errors.waitFor("etcdserver: no leader", timeout: .seconds(20)))
        alone.set(2, forKey: "whileAlone")
        #expect(alone.longLong(forKey: "whileAlone") == 2)
        #expect(alone.hasPendingChanges)

        for index in 1..<3 { try cluster.restart(index, waitForHealth: false) }
        for index in 1..<3 { try cluster.waitUntilHealthy(index) }
        other.set(3, forKey: "afterwards")
        #expect(other.synchronize(timeout: 20))
        #expect(heard.waitFor(key: "afterwards", reason: .serverChange, timeout: .seconds(20)))
        #expect(eventually(timeout: .seconds(20)) { !alone.hasPendingChanges })
        #expect(eventually { other.longLong(forKey: "whileAlone") == 2 })
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "whileAlone") == "2")
        #expect(heard.changes.allSatisfy { !$0.keys.contains("whileAlone") })  // its own write, not announced back
        #expect(eventually { alone.currentErrors.isEmpty })
    }

    @Test func theSameKeyEditedOnTwoMachinesWhilePartitionedIsWonByTheServer() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let here = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("here"))
        let cutOff = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: directory.file("cut-off"))
        here.set("start", forKey: "mode")
        #expect(here.synchronize())
        #expect(eventually { cutOff.string(forKey: "mode") == "start" })
        let recorder = CloudRecorder()
        let observation = cutOff.observe { recorder.record($0) }
        defer { observation.cancel() }

        cluster.pause(2)  // the cut-off machine's only member hangs
        cutOff.set("local edit", forKey: "mode")
        here.set("server edit", forKey: "mode")
        #expect(here.synchronize(timeout: 20))  // a new leader is elected first if m2 led
        #expect(cutOff.synchronize(timeout: 1) == false)
        cluster.pause(2, resume: true)

        // (The recorder may also hear the arrival of "start", announced just after it became readable.)
        #expect(eventually(timeout: .seconds(20)) { cutOff.string(forKey: "mode") == "server edit" })
        #expect(cutOff.synchronize())
        #expect(recorder.changes.last == CloudChange(keys: ["mode"], reason: .serverChange))
        #expect(eventually { !cutOff.hasPendingChanges })
        #expect(try rawEtcdValue(cluster.endpoints[0], namespace, "mode") == #""server edit""#)
        #expect(here.string(forKey: "mode") == "server edit")
    }

    @Test func aWatchResumingBehindACompactionReReadsAndAnnouncesOnlyTheDifferences() throws {
        let cluster = try EtcdCluster(members: 3)
        let namespace = freshNamespace()
        let writer = try cloudMachine([cluster.endpoints[0]], namespace: namespace, state: directory.file("w"))
        let reader = try cloudMachine([cluster.endpoints[2]], namespace: namespace, state: directory.file("r"))
        writer.set(1, forKey: "same")
        writer.set(1, forKey: "changed")
        writer.set(1, forKey: "removed")
        #expect(writer.synchronize())
        #expect(eventually { reader.longLong(forKey: "removed") == 1 })
        let recorder = CloudRecorder()
        let observation = reader.observe { recorder.record($0) }
        defer { observation.cancel() }

        cluster.kill(2)  // the reader's only member
        writer.set(2, forKey: "changed")
        writer.set(3, forKey: "changed")
        writer.removeObject(forKey: "removed")
        writer.set(1, forKey: "added")
        #expect(writer.synchronize())
        let status = try #require(try synchronousPost(cluster.endpoints[0], "/v3/kv/range", #"{"key":"AA=="}"#))
        let revision = try #require(
            status.split(separator: "\"revision\":\"").dropFirst().first?.split(separator: "\"").first)
        #expect(
            try synchronousPost(
                cluster.endpoints[0], "/v3/kv/compaction", #"{"revision":"\#(revision)","physical":true}"#) != nil)
        try cluster.restart(2)

        #expect(recorder.waitFor(key: "added", timeout: .seconds(20)))
        #expect(recorder.changes == [CloudChange(keys: ["changed", "removed", "added"], reason: .serverChange)])
        #expect(reader.values() == ["same": .integer(1), "changed": .integer(3), "added": .integer(1)])
    }

    @Test func aRestartedProcessStartsFromItsLocalCopyAndItsUnsentWritesSurvive() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("state")
        do {
            let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
            store.set("synced", forKey: "a")
            #expect(store.synchronize())
        }
        node.kill(0)
        do {
            let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
            #expect(store.string(forKey: "a") == "synced")  // no server to answer: the local copy
            store.set("unsent", forKey: "b")
            #expect(store.hasPendingChanges)
        }
        try node.restart(0)
        let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
        #expect(store.string(forKey: "b") == "unsent")
        #expect(store.synchronize(timeout: 10))
        #expect(try rawEtcdValue(node.endpoints[0], namespace, "b") == #""unsent""#)
    }

    @Test func keysThatChangedWhileTheProcessWasAwayAreAnnouncedAsAnInitialSync() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("state")
        do {
            let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
            store.set(1, forKey: "x")
            store.set(1, forKey: "y")
            #expect(store.synchronize())
        }
        #expect(try rawEtcdPut(node.endpoints[0], namespace, "y", "2"))  // another machine, meanwhile
        node.pause(0)  // hold the first answer until observing
        defer { node.pause(0, resume: true) }
        let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.longLong(forKey: "y") == 1)  // the local copy
        node.pause(0, resume: true)
        #expect(recorder.waitFor(key: "y", reason: .initialSync))
        #expect(store.synchronize())
        #expect(recorder.changes == [CloudChange(keys: ["y"], reason: .initialSync)])
        #expect(store.longLong(forKey: "y") == 2 && store.longLong(forKey: "x") == 1)
    }

    @Test func aLocalCopyFromAnotherClusterIsReplacedAsAnAccountChange() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("state")
        do {
            let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
            store.set("old cluster", forKey: "a")
            store.set(1, forKey: "same")
            #expect(store.synchronize())
        }
        try node.replaceWithNewCluster()
        #expect(try rawEtcdPut(node.endpoints[0], namespace, "same", "1"))
        #expect(try rawEtcdPut(node.endpoints[0], namespace, "c", #""new cluster""#))

        node.pause(0)  // hold the first answer until observing
        defer { node.pause(0, resume: true) }
        let store = try cloudMachine(node.endpoints, namespace: namespace, state: state)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(store.string(forKey: "a") == "old cluster")  // the local copy, until the server answers
        node.pause(0, resume: true)
        #expect(recorder.waitFor(key: "c", reason: .accountChange))
        #expect(recorder.changes == [CloudChange(keys: ["a", "c"], reason: .accountChange)])
        #expect(store.values() == ["same": .integer(1), "c": .string("new cluster")])
    }

    @Test func aWrongPasswordIsAClearErrorAndTheRightOneSyncs() throws {
        let node = try EtcdCluster(members: 1)
        try enableAuthentication(node.endpoints[0])
        let namespace = freshNamespace()
        let wrong = try cloudMachine(
            node.endpoints, namespace: namespace, state: directory.file("w"), user: "root", password: "guess")
        let errors = ErrorRecorder()
        let observation = wrong.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        wrong.set(1, forKey: "a")
        #expect(wrong.synchronize(timeout: 2) == false)
        #expect(errors.waitFor("etcd refused the login of user 'root'"))
        #expect(errors.errors.contains { $0.kind == .cloud && $0.message.contains("check the user and password") })
        #expect(wrong.longLong(forKey: "a") == 1)

        let right = try cloudMachine(
            node.endpoints, namespace: namespace, state: directory.file("r"), user: "root", password: "secret")
        right.set(2, forKey: "a")
        #expect(right.synchronize())
    }

    @Test func anExpiredTokenMeansANewLoginAndTheWriteStillLands() throws {
        let node = try EtcdCluster(members: 1, extraArguments: ["--auth-token-ttl", "1"])
        let endpoint = node.endpoints[0]
        try enableAuthentication(endpoint)
        let namespace = freshNamespace()
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: node.endpoints, namespace: namespace, user: "root", password: "secret",
                // no probes to keep the token alive
                stateDirectory: directory.file("s"), requestTimeout: 2, probeInterval: 600))
        store.set(1, forKey: "a")
        #expect(store.synchronize())

        // A token taken now expires about when the store's does (a use renews it, so look rarely).
        let token = try #require(
            try synchronousPost(endpoint, "/v3/auth/authenticate", #"{"name":"root","password":"secret"}"#)?
                .split(separator: "\"token\":\"").dropFirst().first?.split(separator: "\"").first.map(String.init))
        let deadline = ContinuousClock.now + .seconds(15)
        var expired = false
        while !expired, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 1.5)
            expired =
                try synchronousPost(endpoint, "/v3/kv/range", #"{"key":"AA=="}"#, headers: ["Authorization": token])
                == nil
        }
        #expect(expired)
        store.set(2, forKey: "a")
        #expect(store.synchronize())
        #expect(try rawEtcdValue(endpoint, namespace, "a", token: loginToken(endpoint)) == "2")
    }
}

/// Adds user root (password "secret") with the root role and turns authentication on.
///
/// Each step is tried until the member takes it (30 s at most): a member just started on a busy machine may
/// answer late (adding a user hashes its password with bcrypt) or not have settled yet. A step repeated
/// after an answer was lost finds its work done ("already exists"), which counts as taken.
func enableAuthentication(_ endpoint: URL) throws {
    for (path, body) in [
        ("/v3/auth/user/add", #"{"name":"root","password":"secret"}"#), ("/v3/auth/role/add", #"{"name":"root"}"#),
        ("/v3/auth/user/grant", #"{"user":"root","role":"root"}"#), ("/v3/auth/enable", "{}")
    ] {
        let deadline = ContinuousClock.now + .seconds(30)
        var last = "no attempt"
        while true {
            let outcome = EtcdHTTP.post(
                url: endpoint.appendingPathComponent(path), body: Data(body.utf8), headers: [:], timeout: 10,
                transport: EtcdTransport())
            switch outcome {
            case .answer(200, _): last = "taken"
            case .answer(let status, let data):
                let text = String(decoding: data, as: UTF8.self)
                last = text.contains("already exists") ? "taken" : "HTTP \(status): \(text)"
            case .unreachable(let why, _, _): last = why
            }
            if last == "taken" { break }
            guard ContinuousClock.now < deadline else { throw EtcdTestError("\(path) failed within 30 s: \(last)") }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// A fresh token of root; a login is tried until one answers (30 s at most): etcd hashes the password with
/// bcrypt, which on a busy machine can take longer than one request's timeout.
func loginToken(_ endpoint: URL) throws -> String? {
    var token: String?
    _ = eventually(timeout: .seconds(30)) {
        token = try? synchronousPost(endpoint, "/v3/auth/authenticate", #"{"name":"root","password":"secret"}"#)?
            .split(separator: "\"token\":\"").dropFirst().first?.split(separator: "\"").first.map(String.init)
        return token != nil
    }
    return token
}
