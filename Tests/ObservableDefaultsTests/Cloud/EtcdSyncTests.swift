import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Cloud stores against one real etcd node (shared by these tests, one namespace each).
@Suite(.serialized, EtcdCluster.required) struct EtcdSyncTests {
    let directory = TemporaryDirectory()

    @Test func aWriteReachesAnotherMachineAsOnlyThatKeyAndIsReadableJSONInEtcd() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let a = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("a"))
        let b = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("b"))
        #expect(a.synchronize() && b.synchronize())
        let heardByA = CloudRecorder(), heardByB = CloudRecorder()
        let observations = [a.observe { heardByA.record($0) }, b.observe { heardByB.record($0) }]
        defer { observations.forEach { $0.cancel() } }

        a.set(["cpu": 1.5, "memory": 512] as [String: Any], forKey: "limits")
        a.set("example.org", forKey: "host")
        #expect(a.synchronize())
        #expect(heardByB.waitFor(key: "host"))
        a.set(true, forKey: "marker")
        #expect(heardByB.waitFor(key: "marker"))
        #expect(Set(heardByB.changes(before: "marker").flatMap(\.keys)) == ["limits", "host"])
        #expect(heardByB.changes(before: "marker").allSatisfy { $0.reason == .serverChange })
        #expect(b.string(forKey: "host") == "example.org")
        #expect(b.dictionary(forKey: "limits")?["memory"] as? Int == 512)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "limits") == "{\n  \"cpu\": 1.5,\n  \"memory\": 512\n}")
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "host") == "\"example.org\"")

        // Back the other way, and a removal; A never hears its own writes.
        b.removeObject(forKey: "host")
        #expect(heardByA.waitFor(key: "host"))
        #expect(a.string(forKey: "host") == nil)
        #expect(heardByA.changes.allSatisfy { !$0.keys.contains("marker") && !$0.keys.contains("limits") })
    }

    @Test func twoProcessesSeeEachOthersWritesWithOnlyTheChangedKey() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let endpoints = etcd.endpoints.map(\.absoluteString).joined(separator: ",")
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("here"))
        store.set(1, forKey: "untouched")
        #expect(store.synchronize())

        // The other process watches; this one writes one key.
        let watcher = Process()
        watcher.executableURL = TestAgent.executableURL
        watcher.arguments = ["cloud", endpoints, namespace, directory.file("there").path, "watch"]
        let output = Pipe(), input = Pipe()
        watcher.standardOutput = output
        watcher.standardInput = input
        try watcher.run()
        defer { try? input.fileHandleForWriting.close(); watcher.waitUntilExit() }
        let lines = LineReader(output.fileHandleForReading)
        #expect(lines.waitFor { $0 == "ready" })
        store.set("example.org", forKey: "host")
        #expect(store.synchronize())
        #expect(lines.waitFor { $0.hasPrefix("serverChange") })
        #expect(
            lines.lines.filter { $0 != "ready" && !$0.hasPrefix("initialSync") } == [
                #"serverChange host=string("example.org")"#
            ])

        // The other process writes; this one hears only that key, from the server.
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        #expect(
            try TestAgent.run(["cloud", endpoints, namespace, directory.file("third").path, "set", "port", "int:8080"])
                == 0)
        #expect(recorder.waitFor(key: "port"))
        #expect(recorder.changes == [CloudChange(keys: ["port"], reason: .serverChange)])
        #expect(store.longLong(forKey: "port") == 8080)
    }

    @Test func writesPastTheLimitsChangeNothingAndAreAnnouncedAsQuotaViolations() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let limits = CloudLimits(maximumKeyCount: 2, maximumTotalBytes: 30, maximumValueBytes: 20, maximumKeyBytes: 64)
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("q"), limits: limits)
        let recorder = CloudRecorder()
        let observation = store.observe { recorder.record($0) }
        defer { observation.cancel() }
        let longKey = String(repeating: "k", count: 65)

        store.set("x", forKey: longKey)  // key of 65 bytes
        store.set(String(repeating: "v", count: 30), forKey: "big")  // value of 32 bytes of JSON
        store.set("0123456789", forKey: "a")  // 12 bytes: fits
        store.set("0123456789abcdef", forKey: "b")  // 18 more: 30 in all, fits
        store.set("c", forKey: "c")  // a third key
        store.set("0123456789abcdef!", forKey: "a")  // 19 + 18 > 30 in all
        #expect(store.synchronize())
        #expect(eventually { recorder.changes.count == 4 })
        #expect(recorder.changes == [longKey, "big", "c", "a"].map { CloudChange(keys: [$0], reason: .quotaViolation) })
        #expect(store.values() == ["a": .string("0123456789"), "b": .string("0123456789abcdef")])
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "a") == #""0123456789""#)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "big") == nil)
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, longKey) == nil)
    }

    @Test func anOutsideValueThatDoesNotDecodeIsReportedAndTheLocalValueKept() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("d"))
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        store.set(4, forKey: "workers")
        #expect(store.synchronize())
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "workers", "{not json"))
        #expect(errors.waitFor("key 'workers': the server holds a value that is not JSON"))
        #expect(errors.errors.contains { $0.description.contains("etcd key \(namespace)/workers") })
        #expect(store.longLong(forKey: "workers") == 4)
        // A good value later is taken in and clears the problem.
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "workers", "5"))
        #expect(eventually { store.longLong(forKey: "workers") == 5 })
        #expect(store.currentErrors.isEmpty)
    }

    /// A key whose server value does not decode, then deleted on the server: the deletion is taken in and
    /// the problem is over, at once and after a restart (which reads the whole namespace).
    @Test func anUndecodableValueThatIsDeletedIsNoLongerReported() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("d"))
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        store.set(4, forKey: "workers")
        #expect(store.synchronize())
        #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "workers", "{not json"))
        #expect(errors.waitFor("key 'workers': the server holds a value that is not JSON"))
        #expect(try rawEtcdDelete(etcd.endpoints[0], namespace, "workers"))
        #expect(eventually { store.object(forKey: "workers") == nil })
        #expect(eventually { store.currentErrors.isEmpty }, "\(store.currentErrors)")
        observation.cancel()

        // The same while the store is away: its restart finds the key gone.
        let otherState = directory.file("other")
        do {
            let other = try cloudMachine(etcd.endpoints, namespace: namespace, state: otherState)
            other.set(4, forKey: "limit")
            #expect(other.synchronize())
            #expect(try rawEtcdPut(etcd.endpoints[0], namespace, "limit", "{not json"))
            #expect(eventually { other.currentErrors.contains { $0.description.contains("key 'limit'") } })
        }
        #expect(try rawEtcdDelete(etcd.endpoints[0], namespace, "limit"))
        let restarted = try cloudMachine(etcd.endpoints, namespace: namespace, state: otherState)
        #expect(restarted.synchronize())
        #expect(restarted.object(forKey: "limit") == nil)
        #expect(restarted.currentErrors.isEmpty, "\(restarted.currentErrors)")
    }
}

/// Reads lines a child process prints, on a background thread.
final class LineReader: Sendable {
    private let received = Locked<[String]>([])
    var lines: [String] { received.withLock { $0 } }

    init(_ handle: FileHandle) {
        let received = self.received
        Thread.detachNewThread {
            var pending = ""
            while case let data = handle.availableData, !data.isEmpty {
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    received.withLock { $0.append(line) }
                }
            }
        }
    }

    func waitFor(timeout: Duration = .seconds(15), _ condition: (String) -> Bool) -> Bool {
        eventually(timeout: timeout) { lines.contains(where: condition) }
    }
}
