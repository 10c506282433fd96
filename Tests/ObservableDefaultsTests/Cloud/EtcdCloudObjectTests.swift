import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// `@ObservableCloud` objects (`CloudFleet`) in two processes synced through a real etcd:
/// this test process and a `defaults-test-agent cloud … object` child with the same class.
@Suite(.serialized, EtcdCluster.required) struct EtcdCloudObjectTests {
    let directory = TemporaryDirectory()

    /// The agent's object on `state`: its output lines, and its standard input for commands.
    final class AgentObject {
        let process = Process()
        let input = Pipe()
        let lines: LineReader

        init(_ endpoints: [URL], namespace: String, state: URL) throws {
            process.executableURL = TestAgent.executableURL
            process.arguments = [
                "cloud", endpoints.map(\.absoluteString).joined(separator: ","), namespace, state.path, "object"
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = input
            lines = LineReader(output.fileHandleForReading)
            try process.run()
        }

        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        /// The lines after "ready" that report changes.
        var changes: [String] {
            Array(lines.lines.drop { $0 != "ready" }.dropFirst().filter { $0.hasPrefix("changed") })
        }

        func finish() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }

        /// Stops it at once with SIGKILL (it may be waiting for an unreachable cluster before reading its
        /// input, and a child of the test process starts with SIGTERM blocked).
        func terminate() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test func twoProcessesSeeEachOthersPropertyWritesWithOnlyTheChangedPropertyNotified() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let store = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("here"))
        let fleet = CloudFleet(store: store)
        #expect(store.synchronize())
        let agent = try AgentObject(etcd.endpoints, namespace: namespace, state: directory.file("there"))
        defer { agent.finish() }
        #expect(agent.lines.waitFor { $0 == "ready" })

        // This process writes one property; the other hears that property only (logLevel is the marker).
        fleet.workers = 7
        #expect(agent.lines.waitFor { $0 == "changed workers" })
        fleet.logLevel = "marker"
        #expect(agent.lines.waitFor { $0 == "changed logLevel" })
        #expect(agent.changes == ["changed workers", "changed logLevel"])
        agent.send("values")
        #expect(agent.lines.waitFor { $0.hasPrefix("values workers=7 logLevel=marker limit=nil hosts= ") })

        // The other process writes; this one hears that property only.
        let flags = FleetFlags(fleet)
        agent.send("set hosts a,b")
        #expect(eventually(timeout: .seconds(15)) { fleet.hosts == ["a", "b"] })
        agent.send("set logLevel second-marker")
        #expect(eventually(timeout: .seconds(15)) { fleet.logLevel == "second-marker" })
        store.settle()
        #expect(flags.fired == ["hosts", "logLevel"])
        #expect(fleet.events.events == ["willSet [\"a\", \"b\"]", "didSet [] -> [\"a\", \"b\"]"])
        #expect(try rawEtcdValue(etcd.endpoints[0], namespace, "fleet_workers") == "7")
    }

    @Test func aRestartedProcessReadsItsValuesFromTheLocalCopyWhileTheClusterIsDown() throws {
        let node = try EtcdCluster(members: 1)
        let namespace = freshNamespace()
        let state = directory.file("machine")
        let first = try AgentObject(node.endpoints, namespace: namespace, state: state)
        #expect(first.lines.waitFor { $0 == "ready" })
        first.send("set workers 42")
        first.send("set hosts x,y")
        first.send("sync")
        #expect(first.lines.waitFor { $0 == "synced" })
        first.finish()

        node.kill(0)
        // No member answers now: the values can only come from the local copy, and they come at once.
        let started = ContinuousClock.now
        let second = try AgentObject(node.endpoints, namespace: namespace, state: state)
        defer { second.terminate() }
        #expect(second.lines.waitFor { $0.hasPrefix("values ") })
        let elapsed = ContinuousClock.now - started
        #expect(second.lines.lines.first == "values workers=42 logLevel=info limit=nil hosts=x,y endpoint=localhost:80")
        print("restart from the local copy with the cluster down: values printed \(elapsed) after launch")
    }
}
