import EtcdLauncher
import Foundation
import ObservableDefaults

/// `defaults-demo cloud`: two processes ("machines"), each with a ``CloudDemoSettings`` object on its own
/// `CloudKeyValueStore`, synced through a throwaway single-node etcd. Each machine observes every property
/// with `withObservationTracking`; each change is timed from the assignment in one machine to its arrival
/// in the other, and the observer calls are counted per property. Without etcd on `PATH`, the development
/// store shows the same in one process, with a simulated other machine.
struct CloudDemo {
    static let namespace = "observable-defaults-demo"
    /// Observer calls per property each machine should see: its own write and the other machine's.
    static let expectedCounts = ["greeting": 1, "volume": 1, "theme": 0]

    /// Runs the demo in `directory` (removed by the caller); returns whether every change arrived once.
    static func run(directory: URL) -> Bool {
        guard let etcd = EtcdBinary.find() else { return developmentMode() }
        say("ObservableDefaults cloud demo: two machines share an @ObservableCloud settings object through etcd.\n")
        let node: EtcdNode
        do {
            node = try EtcdNode(executable: etcd)
        } catch {
            say("defaults-demo: cannot start etcd (\(etcd.path)): \(error)")
            return false
        }
        defer { node.stop() }
        say(
            "Started a throwaway etcd node at \(node.endpoint.absoluteString) (pid \(node.pid ?? 0), data in \(node.directory.path))."
        )
        let address = "etcd://\(node.endpoint.host!):\(node.endpoint.port!)/\(namespace)"
        return CloudDemo(address: address, directory: directory).twoMachines()
    }

    let address: String
    let directory: URL

    private func twoMachines() -> Bool {
        let store: CloudKeyValueStore
        do {
            var configuration = try EtcdConfiguration(url: address)
            configuration.stateDirectory = directory.appendingPathComponent("machine-a")
            store = try CloudKeyValueStore(etcd: configuration)
        } catch {
            say("defaults-demo: cannot open the cloud store: \(error)")
            return false
        }
        let machineB: MachineProcess
        do {
            machineB = try MachineProcess(address: address, state: directory.appendingPathComponent("machine-b"))
        } catch {
            say("defaults-demo: cannot start the second machine: \(error)")
            return false
        }
        defer { machineB.finish() }
        guard store.synchronize(), machineB.waitForLine(prefix: "ready") != nil else {
            say("   ✗ the machines did not sync with etcd: \(machineB.errorLines)")
            return false
        }
        let settings = CloudDemoSettings(store: store)
        let log = ArrivalLog()
        settings.trackEachProperty { log.record(Arrival(property: $0, time: $1)) }
        say(
            """
            Machine A is this process; machine B is a second process (pid \(machineB.pid)). Namespace '\(Self.namespace)'.
            Each holds a CloudDemoSettings object and observes each property with withObservationTracking.

            """)

        // 1. A assigns a property; B's observer of that property hears it.
        say("1. Machine A sets settings.volume = 8.")
        let start = Date()
        settings.volume = 8
        var allArrived = true
        if let line = machineB.waitForLine(prefix: "changed volume "), let change = MachineChange(line) {
            say(
                String(
                    format: "   → machine B: settings.volume = %@ arrived %.1f ms after machine A's assignment",
                    change.value, change.time.timeIntervalSince(start) * 1000))
            allArrived = change.value == "8"
        } else {
            say("   ✗ machine B did not hear volume within 5 seconds")
            allArrived = false
        }

        // 2. B assigns a property; A's observer of that property hears it.
        say("\n2. Machine B sets settings.greeting = \"hello from machine B\".")
        let seen = log.count
        machineB.send("write greeting hello from machine B")
        let wrote = machineB.waitForLine(prefix: "wrote greeting").flatMap { Double($0.split(separator: " ")[2]) }
        if let wrote, let arrival = log.wait(for: "greeting", after: seen) {
            // Bounded: the value is stored when Observation's `onChange` has already run.
            let deadline = ContinuousClock.now.advanced(by: .seconds(2))
            while settings.greeting != "hello from machine B" && ContinuousClock.now < deadline { usleep(200) }
            say(
                String(
                    format: "   → machine A: settings.greeting = %@ arrived %.1f ms after machine B's assignment",
                    settings.describe("greeting"), (arrival.time.timeIntervalSince1970 - wrote) * 1000))
            allArrived = settings.greeting == "hello from machine B" && allArrived
        } else {
            say("   ✗ machine A did not hear greeting within 5 seconds")
            allArrived = false
        }

        // Each machine's observers: its own write and the other's, once each; no echo, no other property.
        machineB.send("counts")
        let countsB = machineB.waitForLine(prefix: "counts ").map(Self.counts(in:)) ?? [:]
        let countsA = log.counts()
        say(
            """

            Observer calls per property (each machine's own write included):
              machine A: \(Self.describe(countsA))
              machine B: \(Self.describe(countsB))
            Each change notified only its own property, once on each machine (no echo of a machine's own write).

            Try it yourself with a real cluster (etcd on 127.0.0.1:2379), in two terminals:
              swift run defaults cloud watch --cloud etcd://127.0.0.1:2379/\(Self.namespace)
              swift run defaults cloud write demo_greeting hi --cloud etcd://127.0.0.1:2379/\(Self.namespace)
            """)
        return allArrived && Self.matchesExpected(countsA) && Self.matchesExpected(countsB)
    }

    /// Without etcd: the development store (memory only, one process); the other machine is simulated.
    private static func developmentMode() -> Bool {
        say(
            """
            ObservableDefaults cloud demo — etcd is not installed, so this runs in development mode:
            memory only, in this one process; the "other machine" is simulated.
            To see two processes sync through a real etcd node, install it and run again:
              apt-get install -y etcd-server

            """)
        let store = CloudKeyValueStore.development
        let settings = CloudDemoSettings(store: store)
        let log = ArrivalLog()
        settings.trackEachProperty { log.record(Arrival(property: $0, time: $1)) }
        say("An @ObservableCloud CloudDemoSettings object; each property observed with withObservationTracking.\n")

        say("1. This process sets settings.volume = 8.")
        var start = Date()
        var seen = log.count
        settings.volume = 8
        var allArrived = report(
            log.wait(for: "volume", after: seen), settings, "volume", expected: "8", since: start,
            what: "after the assignment")

        say("\n2. The simulated other machine sets greeting = \"hello from elsewhere\" (a server change).")
        seen = log.count
        start = Date()
        do {
            try store.simulateExternalChange(["demo_greeting": .string("hello from elsewhere")], reason: .serverChange)
        } catch {
            say("   ✗ \(error)")
            return false
        }
        allArrived =
            report(
                log.wait(for: "greeting", after: seen), settings, "greeting", expected: "\"hello from elsewhere\"",
                since: start, what: "later") && allArrived
        let counts = log.counts()
        say(
            """

            Observer calls per property: \(describe(counts)) — each change notified only its own property.
            """)
        return allArrived && matchesExpected(counts)
    }

    /// Prints how one change reached the object; returns whether it did, with the `expected` value.
    private static func report(
        _ arrival: Arrival?, _ settings: CloudDemoSettings, _ property: String, expected: String,
        since start: Date, what: String
    ) -> Bool {
        guard let arrival else {
            say("   ✗ the change did not reach the settings object within 5 seconds")
            return false
        }
        // Bounded: Observation calls `onChange` before a write in this process stores the value.
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        while settings.describe(property) != expected && ContinuousClock.now < deadline { usleep(200) }
        say(
            String(
                format: "   → settings.%@ = %@; observer called %.2f ms %@", property, settings.describe(property),
                max(0, arrival.time.timeIntervalSince(start) * 1000), what))
        return settings.describe(property) == expected
    }

    private static func describe(_ counts: [String: Int]) -> String {
        CloudDemoSettings.properties.map { "\($0.name) \(counts[$0.name, default: 0])" }.joined(separator: ", ")
    }

    private static func matchesExpected(_ counts: [String: Int]) -> Bool {
        expectedCounts.allSatisfy { counts[$0.key, default: 0] == $0.value }
            && Set(counts.keys).isSubset(of: expectedCounts.keys)
    }

    /// Parses machine B's `counts greeting=1 volume=1 theme=0`.
    private static func counts(in line: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let count = Int(parts[1]), count > 0 { counts[String(parts[0])] = count }
        }
        return counts
    }
}

/// One `changed PROPERTY TIME VALUE` line of machine B (see ``CloudMachine``).
struct MachineChange {
    var property: String
    var time: Date
    var value: String

    init?(_ line: String) {
        let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
        guard fields.count == 4, fields[0] == "changed", let seconds = Double(fields[2]) else { return nil }
        property = fields[1]
        time = Date(timeIntervalSince1970: seconds)
        value = fields[3]
    }
}
