import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Several processes running one store (same endpoints, namespace and state directory) share its local
/// copy: each writes its own (`CloudLocalCopyShare`), and a process that loads takes in the copies of the
/// ones that ended, so no write whose `set` returned is lost, and each key ends with its latest write.
@Suite struct CloudSharedCopyTests {
    let directory = TemporaryDirectory()

    /// The files of the state directory's copies: only the primary's are left once the others were taken in.
    private func copyFiles(_ state: URL) -> [String] {
        let cloud = state.appendingPathComponent("cloud")
        return ((try? FileManager.default.contentsOfDirectory(atPath: cloud.path)) ?? []).sorted()
    }

    @Test func twoLocalOnlyWritersAtOnceLoseNothing() throws {
        let state = directory.file("state")
        let prefixes = ["w0", "w1"]
        let writers = try Self.startWriters(prefixes) { ["cloud-local-write-many", state.path, $0, "200"] }
        for writer in writers { writer.process.waitUntilExit() }

        let values = CloudKeyValueStore.localOnly(directory: state).values()
        for prefix in prefixes {
            let written = (0..<200).filter { values["\(prefix)\($0)"] == .integer($0) }.count
            #expect(written == 200, "\(prefix): \(written) of 200 writes loaded")
        }
        #expect(values["shared"] == Self.latest(writers, prefixes, count: 200))
    }

    @Test func aLiveProcessKeepsItsCopyAndLendsItsValues() throws {
        let state = directory.file("state")
        let first = CloudKeyValueStore.localOnly(directory: state)
        first.set("first", forKey: "a")
        first.synchronize()
        let second = CloudKeyValueStore.localOnly(directory: state)
        #expect(second.core.share?.isPrimary == false)
        #expect(second.string(forKey: "a") == "first")
        second.set("second", forKey: "b")
        second.synchronize()
        // The first is still running: its copy is its own, nobody takes it over.
        #expect(first.core.share?.isPrimary == true)
        #expect(copyFiles(state).contains { $0.hasPrefix("local.json.p") })
    }
}

/// The same through etcd: writes made while the cluster is out of reach, by processes sharing the copy,
/// are all uploaded once it is back, each key ending with its latest write.
@Suite(.serialized, EtcdCluster.required) struct EtcdSharedCopyTests {
    let directory = TemporaryDirectory()

    @Test func offlineWritesOfTwoProcessesAreAllUploadedOnceTheClusterIsBack() throws {
        let etcd = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("state")
        let endpoint = etcd.plainEndpoints[0]
        etcd.kill(0)
        let prefixes = ["w0", "w1"]
        // One writer exits normally, the other is killed -9 once its writes are in the copy.
        let writers = try CloudSharedCopyTests.startWriters(prefixes) { prefix in
            ["cloud", endpoint.absoluteString, namespace, state.path, "write-many", prefix, "200"]
                + (prefix == "w1" ? ["hold"] : [])
        }
        writers[0].process.waitUntilExit()
        #expect(writers[0].process.terminationStatus == 0)
        kill(writers[1].process.processIdentifier, SIGKILL)
        writers[1].process.waitUntilExit()

        // A third process loads every write while the cluster is still out of reach.
        let expectedShared = CloudSharedCopyTests.latest(writers, prefixes, count: 200)
        do {
            let third = try cloudMachine([endpoint], namespace: namespace, state: state)
            let values = third.values()
            for prefix in prefixes {
                let loaded = (0..<200).filter { values["\(prefix)\($0)"] == .integer($0) }.count
                #expect(loaded == 200, "\(prefix): \(loaded) of 200 writes loaded")
            }
            #expect(values["shared"] == expectedShared)
            try etcd.restart(0)
            #expect(third.synchronize(timeout: 30))
        }
        for prefix in prefixes {
            for index in [0, 57, 199] {
                #expect(try rawEtcdValue(endpoint, namespace, "\(prefix)\(index)") == "\(index)", "\(prefix)\(index)")
            }
        }
        #expect(try rawEtcdValue(endpoint, namespace, "shared") == expectedShared.jsonText)
        let left =
            ((try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("cloud").path)) ?? [])
        #expect(!left.contains { $0.contains(".json.p") }, "the ended processes' copies were not removed: \(left)")
    }

    /// A running store takes over the copy of a process that ended while the cluster was out of reach,
    /// and uploads its writes once the cluster is back, without any process starting.
    @Test func aRunningStoreUploadsTheWritesOfASiblingKilledOffline() throws {
        let etcd = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("state")
        let endpoint = etcd.plainEndpoints[0]
        let running = try cloudMachine([endpoint], namespace: namespace, state: state)
        running.set("running", forKey: "mine")
        #expect(running.synchronize(timeout: 30))
        etcd.kill(0)
        let writers = try CloudSharedCopyTests.startWriters(["late"]) { prefix in
            ["cloud", endpoint.absoluteString, namespace, state.path, "write-many", prefix, "50", "hold"]
        }
        kill(writers[0].process.processIdentifier, SIGKILL)
        writers[0].process.waitUntilExit()
        try etcd.restart(0)
        let uploaded = eventually(timeout: .seconds(30)) {
            (try? rawEtcdValue(endpoint, namespace, "late49")) == "49" && !running.hasPendingChanges
        }
        #expect(uploaded, "the killed process's writes were not uploaded by the running store")
        for index in [0, 25, 48] { #expect(try rawEtcdValue(endpoint, namespace, "late\(index)") == "\(index)") }
        #expect(eventually { running.longLong(forKey: "late49") == 49 })
    }
}

extension CloudSharedCopyTests {
    /// Starts one `defaults-test-agent` per prefix at once, with the arguments `arguments` makes for it, and
    /// waits until each printed "done NANOSECONDS".
    static func startWriters(
        _ prefixes: [String], _ arguments: (String) -> [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [(process: Process, lastWrite: Int64)] {
        let started = try prefixes.map { try TestAgent.start(arguments($0)) }
        return started.map { agent, output in
            let reader = LineReader(output.fileHandleForReading)
            let finished = reader.waitFor(timeout: .seconds(60)) { $0.hasPrefix("done ") }
            #expect(finished, "a writer did not finish: \(reader.lines)", sourceLocation: sourceLocation)
            let last = reader.lines.first { $0.hasPrefix("done ") }.flatMap { Int64($0.dropFirst(5)) } ?? 0
            return (agent, last)
        }
    }

    /// The value of `shared` left by the writer that wrote it last: "PREFIX-(COUNT - 1)".
    static func latest(_ writers: [(process: Process, lastWrite: Int64)], _ prefixes: [String], count: Int)
        -> DefaultsValue
    {
        let last = zip(writers, prefixes).max { $0.0.lastWrite < $1.0.lastWrite }!.1
        return .string("\(last)-\(count - 1)")
    }
}

private extension DefaultsValue {
    /// The value as the store's JSON text.
    var jsonText: String { String(decoding: CloudValueText.encode(self), as: UTF8.self) }
}
