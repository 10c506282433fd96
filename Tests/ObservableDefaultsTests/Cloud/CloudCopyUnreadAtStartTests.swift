import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// What the agent `cloud-start-without-descriptors` printed, and checks common to both stores.
private struct UnreadStartRun {
    let lines: [String]

    /// Runs the agent to its end: a store made while no descriptor is left, its copy read late.
    init(_ arguments: [String]) throws {
        let (agent, output) = try TestAgent.start(["cloud-start-without-descriptors"] + arguments)
        defer { if agent.isRunning { agent.terminate() } }
        let reader = LineReader(output.fileHandleForReading)
        _ = eventually(timeout: .seconds(90)) { !agent.isRunning }
        _ = reader.waitFor(timeout: .seconds(5)) { $0.hasPrefix("values ") }  // read to the end
        agent.waitUntilExit()
        lines = reader.lines
        #expect(agent.terminationStatus == 0, "exit 4: the copy's values never came; 5: not synced: \(lines)")
    }

    /// The problems printed before the descriptors were freed, and at the end.
    var problemsAtStart: [String] { Array(lines.prefix { $0 != "freed" }.filter { $0.hasPrefix("problem ") }) }
    var problemsAtEnd: [String] { Array(lines.drop { !$0.hasPrefix("values ") }.filter { $0.hasPrefix("problem ") }) }
    var values: String? { lines.first { $0.hasPrefix("values ") } }

    /// The store started empty, said why with the copy's file and `EMFILE`, and no longer says so at the end.
    func expectReadLate(_ copy: CloudLocalCopy, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            lines.first == "started ", "the store loaded something at start: \(lines)", sourceLocation: sourceLocation)
        let unread = problemsAtStart.first { $0.contains("cannot read the cloud store's local copy now") }
        #expect(
            unread?.contains("it is left as it is and nothing is written to it until it is read") == true,
            "\(problemsAtStart)", sourceLocation: sourceLocation)
        #expect(unread?.contains(copy.fileURL.path) == true, "\(problemsAtStart)", sourceLocation: sourceLocation)
        #expect(unread?.hasSuffix("errno \(EMFILE)") == true, "\(problemsAtStart)", sourceLocation: sourceLocation)
        #expect(
            !problemsAtEnd.contains { $0.contains("local copy") }, "\(problemsAtEnd)", sourceLocation: sourceLocation)
        let listing =
            (try? FileManager.default.contentsOfDirectory(atPath: copy.fileURL.deletingLastPathComponent().path)) ?? []
        #expect(
            !listing.contains { $0.hasSuffix(".unread") || $0.hasSuffix(".broken") }, "moved aside: \(listing)",
            sourceLocation: sourceLocation)
    }
}

/// A local copy that cannot be read at start for lack of file descriptors (`EMFILE`) is neither moved
/// aside nor overwritten: the store starts without it and takes it in once it can read it, keeping what
/// the process wrote meanwhile (`CloudState.takeInLateCopy`).
@Suite struct CloudCopyUnreadAtStartTests {
    let directory = TemporaryDirectory()

    @Test func aLocalOnlyStoreTakesInItsCopyOnceItCanReadItAndKeepsItsOwnWrites() throws {
        let state = directory.file("local")
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        var saved = CloudState()
        saved.setValue(.string("from copy"), forKey: "a")
        saved.setValue(.string("old b"), forKey: "b")
        saved.setValue(.string("old"), forKey: "gone")
        try copy.save(saved)
        saved.setValue(.string("from journal"), forKey: "j")
        _ = try copy.append(CloudLocalCopyJournal.content(of: ["j"], in: saved))
        copy.stopWriting()

        // Sets b, removes gone (which memory never had), then waits for j: the journal's record.
        let run = try UnreadStartRun([state.path, "-", "-", "b", "mine", "gone", "j"])
        run.expectReadLate(copy)
        #expect(run.values == "values a=from copy,b=mine,j=from journal", "\(run.lines)")
        // What the next process would load: the store may have written a copy of its own beside the
        // first (it could not lock the first without a descriptor, see `CloudLocalCopyShare`).
        #expect(
            CloudLocalCopyShare.currentState(at: copy.fileURL)?.values == [
                "a": .string("from copy"), "b": .string("mine"), "j": .string("from journal")
            ])
    }
}

/// A store's retries must not need Dispatch's timers: Dispatch opens its epoll instance, eventfd and a
/// timerfd per clock on first use, so in a process that never scheduled a Dispatch timer before its
/// descriptors ran out, arming a retry with `asyncAfter` stopped the process with SIGILL (`epoll_create1`
/// failed with `EMFILE`) or, with the epoll instance but no timerfd yet, the timer was dropped and the copy
/// never read. The retries now run on `DelayedWork`'s thread. The agents of the tests above warm Dispatch up
/// first (`warmUpDispatch()`); this one does not.
@Suite struct CloudCopyUnreadAtStartColdDispatchTests {
    let directory = TemporaryDirectory()

    @Test func aStoreStartedWithoutDescriptorsInAProcessThatNeverScheduledADispatchTimer() throws {
        let state = directory.file("cold")
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        try copy.save(cloudState(["a": .string("from copy")]))
        copy.stopWriting()
        let agent = Process()
        agent.executableURL = TestAgent.executableURL
        agent.arguments = ["cloud-start-without-descriptors-cold", state.path, "-", "-", "b", "mine", "gone", "a"]
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = FileHandle.nullDevice  // Swift's crash report, when Dispatch stops it
        try agent.run()
        agent.waitUntilExit()  // at once when stopped, after 20 s when the copy is never read
        #expect(
            agent.terminationReason == .exit && agent.terminationStatus == 0,
            "\(agent.terminationReason == .uncaughtSignal ? "signal" : "exit") \(agent.terminationStatus): 4 = the copy was never read"
        )
    }
}

/// The same for an etcd store: the copy's unsent writes are uploaded once it is read, unless the server
/// changed their key since; the process's own write made meanwhile is uploaded too, based on the revision
/// the copy knew (the sync thread reads the copy, if it can, before its first read of the namespace).
@Suite(.serialized, EtcdCluster.required) struct EtcdCopyUnreadAtStartTests {
    let directory = TemporaryDirectory()

    @Test func unsentWritesOfACopyReadLateAreUploaded() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let state = directory.file("machine")
        let fileURL = try releasedMachineCopy(etcd.plainEndpoints, namespace: namespace, state: state)
        // Writes made while the server could not be reached, as the copy keeps them: one based on the key
        // being absent (it still is), one on a revision the server never had (it loses).
        let copy = CloudLocalCopy(fileURL: fileURL)
        var saved = try #require(try copy.load())
        for (key, base) in [("offline", Int64(0)), ("stale", 99)] {
            saved.setValue(.string("written offline"), forKey: key)
            saved.pending[key] = PendingWrite(
                value: .string("written offline"), baseRevision: base, generation: saved.nextGeneration)
            saved.nextGeneration += 1
        }
        try copy.save(saved)
        copy.stopWriting()

        let endpoints = etcd.plainEndpoints.map(\.absoluteString).joined(separator: ",")
        // The child writes "kept" before it can read the copy or reach the server: as after a normal start,
        // the write is based on the revision the copy knew (the server's still), so it lands.
        let run = try UnreadStartRun([state.path, endpoints, namespace, "kept", "from child", "nothing", "offline"])
        run.expectReadLate(copy)
        #expect(run.values == "values kept=from child,offline=written offline", "\(run.lines)")
        let endpoint = etcd.plainEndpoints[0]
        #expect(try rawEtcdValue(endpoint, namespace, "offline") == "\"written offline\"")
        #expect(try rawEtcdValue(endpoint, namespace, "kept") == "\"from child\"")
        #expect(try rawEtcdValue(endpoint, namespace, "stale") == nil)
        let after = try #require(CloudLocalCopyShare.currentState(at: fileURL))
        #expect(after.pending.isEmpty)
        #expect(after.values == ["kept": .string("from child"), "offline": .string("written offline")])
    }
}
