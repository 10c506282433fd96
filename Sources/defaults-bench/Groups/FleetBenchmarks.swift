import EtcdLauncher
import Foundation
import ObservableDefaults

/// Group 11: what a fleet of stores costs one etcd member (issue 31). One child process holds N stores,
/// each with its own watch on the member (or on a `grpc-proxy` in front of it); over gRPC they share one
/// connection (the library's default) or each has its own (the opt-out, as a fleet of machines would). The
/// member's resident memory growth and its CPU per change are charged to the watchers. The floors: N raw
/// gRPC watches, each on a connection of its own, N raw Watch streams on one connection, or N watches on ONE
/// Watch stream of one connection (what etcd's Go client makes of one process's watches); no library code.
enum FleetBenchmarks {
    static let number = 11

    /// One way the fleet reaches the member.
    struct Side {
        let id: String
        let name: String
        /// Through the proxy rather than to the member directly.
        let throughProxy: Bool
        /// The `?transport=` value; `nil`: a raw floor (``EtcdGRPCRawWatch``), not the library.
        let transport: String?
        /// Every store (or raw watch) on one connection, rather than each on its own.
        let sharedConnection: Bool
        /// The floor side this side's cost is related to (`nil`: none; the gateway's is the gRPC floor of
        /// connections of their own, the cheapest a watcher with its own connection can be).
        let floor: String?
        /// Every raw watch a watch ID on one Watch stream of the one connection, rather than a stream each
        /// (raw floors only).
        var sharedStream = false
    }

    static let sides = [
        Side(
            id: "raw-grpc", name: "raw gRPC watch, each on its own connection (no library code)", throughProxy: false,
            transport: nil, sharedConnection: false, floor: nil),
        Side(
            id: "raw-grpc-shared", name: "raw gRPC watch streams, all on one connection (no library code)",
            throughProxy: false, transport: nil, sharedConnection: true, floor: nil),
        Side(
            id: "raw-grpc-stream", name: "raw gRPC watches, all on one Watch stream (no library code)",
            throughProxy: false, transport: nil, sharedConnection: true, floor: nil, sharedStream: true),
        Side(
            id: "gateway", name: "JSON gateway, each store to the member", throughProxy: false, transport: "gateway",
            sharedConnection: false, floor: "raw-grpc"),
        Side(
            id: "grpc", name: "gRPC, the stores sharing one connection to the member (default)", throughProxy: false,
            transport: "grpc", sharedConnection: true, floor: "raw-grpc-stream"),
        Side(
            id: "grpc-own", name: "gRPC, each store its own connection to the member", throughProxy: false,
            transport: "grpc", sharedConnection: false, floor: "raw-grpc"),
        Side(
            id: "grpc-proxy", name: "gRPC, the stores sharing one connection to one `etcd grpc-proxy`",
            throughProxy: true, transport: "grpc", sharedConnection: true, floor: nil)
    ]

    /// How many changes the CPU rows average over.
    static func changes(_ settings: RunSettings) -> Int { settings.quick ? 5 : 30 }
    static func stores(_ settings: RunSettings) -> Int { settings.quick ? 100 : 1_000 }

    static func run(_ context: BenchContext) -> GroupResult {
        let count = stores(context.settings)
        var group = GroupResult(
            number: number, title: "Fleet (etcd)",
            method:
                "One throwaway single-node etcd on a loopback port. A child process opens \(count) `CloudKeyValueStore`s "
                + "(each its own watch and local copy, all on one namespace per side; over gRPC sharing one connection, "
                + "or each its own where the side says so) and observes a key; this "
                + "process puts a new value to that key over a raw JSON-gateway socket and waits until every store has it. "
                + "Memory: the member's `VmRSS` once every store has seen a first change, minus before the child started, "
                + "per store. CPU: the member's user + system time over \(changes(context.settings)) changes, minus the same "
                + "changes with no fleet, per change and per store. Watchers: the member's `etcd_debugging_mvcc_watcher_total` "
                + "growth. Sides run one after the other, each on a fresh member. The floor sides open \(count) raw gRPC "
                + "watches of the key instead (hand-written HTTP/2, no library code): each on its own connection, "
                + "\(count) Watch streams on one connection, or \(count) watch IDs on one Watch stream (each create "
                + "sent after the previous one's answer, as etcd's Go client does).")
        func missingAll(_ reason: String) -> GroupResult {
            context.progress("11. fleet: \(reason)")
            group.rows = sides.flatMap { side in
                rowNames(side, count).map { ResultRow.missing(id: $0.id, name: $0.name, reason: reason) }
            }
            return group
        }
        guard let executable = EtcdBinary.find() else {
            return missingAll("skipped: etcd is not installed; install it with `\(EtcdBinary.installCommand)`")
        }
        for side in sides {
            // A fresh member (and proxy) per side: memory the last side's fleet left to Go's collector would
            // otherwise be returned during the next side's measurement.
            let node: EtcdNode
            let proxy: EtcdGRPCProxy
            do {
                node = try EtcdNode(executable: executable)
                proxy = try EtcdGRPCProxy(members: [node.endpoint], executable: executable)
            } catch {
                return missingAll("etcd did not start: \(error)")
            }
            group.rows += measure(side, context: context, node: node, proxy: proxy, count: count)
            proxy.stop()
            node.stop()
        }
        for what in ["memory", "cpu"] {
            for side in sides {
                if let floor = side.floor { group.relate("\(side.id).\(what)", to: "\(floor).\(what)") }
            }
        }
        return group
    }

    private static func rowNames(_ side: Side, _ count: Int) -> [(id: String, name: String)] {
        [
            ("\(side.id).memory", "\(side.name): member memory per store (\(count) stores)"),
            ("\(side.id).cpu", "\(side.name): member CPU per change per store"),
            ("\(side.id).watchers", "\(side.name): watchers the member serves for the \(count) stores")
        ]
    }

    private static func measure(_ side: Side, context: BenchContext, node: EtcdNode, proxy: EtcdGRPCProxy, count: Int)
        -> [ResultRow]
    {
        let names = rowNames(side, count)
        func missing(_ reason: String) -> [ResultRow] {
            context.progress("11. fleet, \(side.id): \(reason)")
            return names.map { ResultRow.missing(id: $0.id, name: $0.name, reason: reason) }
        }
        let target = side.throughProxy ? proxy.endpoint : node.endpoint
        let namespace = "fleet-\(side.id)"
        let arguments: [String]
        if let transport = side.transport {
            let address = "etcd://127.0.0.1:\(target.port ?? 0)/\(namespace)?transport=\(transport)"
            do {
                _ = try EtcdConfiguration(url: address)
            } catch {
                return missing("not measured: \(error)")
            }
            arguments =
                ["cloud-fleet", address, context.directory("fleet-\(side.id)").path, String(count)]
                + (side.sharedConnection ? [] : ["own-connections"])
        } else {
            arguments =
                ["cloud-fleet-raw", target.absoluteString, "\(namespace)/stamp", String(count)]
                + (side.sharedStream ? ["stream"] : side.sharedConnection ? ["shared"] : [])
        }
        guard let pid = node.pid else { return missing("the etcd node is not running") }
        let putter = EtcdRawPutter(endpoint: node.endpoint, key: "\(namespace)/stamp")
        var stamp = Int(monotonicNanoseconds())
        func cpuOfChanges(_ each: () -> Bool) -> Int? {
            guard let before = EtcdMemberUsage.of(pid) else { return nil }
            for _ in 0..<changes(context.settings) {
                stamp += 1
                guard (try? putter.put(stamp)) != nil, each() else { return nil }
            }
            guard let after = EtcdMemberUsage.of(pid) else { return nil }
            return (after.cpuNanoseconds - before.cpuNanoseconds) / changes(context.settings)
        }
        context.progress("11. fleet, \(side.id): changes with no fleet")
        guard let alone = cpuOfChanges({ true }), let watchersBefore = etcdWatcherCount(node.endpoint),
            let before = EtcdMemberUsage.of(pid)
        else { return missing("the member's usage cannot be read") }

        context.progress("11. fleet, \(side.id): opening \(count) stores")
        let child: ChildProcess
        do {
            child = try ChildProcess(arguments)
        } catch {
            return missing("cannot start the fleet process: \(error)")
        }
        defer {
            child.closeInput()
            _ = child.wait()
            waitForWatchers(node.endpoint, atMost: watchersBefore)
        }
        guard let ready = child.readLine(deadline: monotonicNanoseconds() + 300_000_000_000), ready == "ready" else {
            child.terminate()
            return missing(
                "the fleet did not start: \(child.readLine(deadline: monotonicNanoseconds()) ?? "no answer")")
        }
        func allArrive() -> Bool {
            child.send("wait \(stamp)")
            guard let line = child.readLine(deadline: monotonicNanoseconds() + 90_000_000_000) else { return false }
            return line == "arrived \(stamp) \(count)"
        }
        // "ready" says every store synchronised; the last watches may still be on their way. One that reaches
        // grpc-proxy after a change was made starts behind the proxy's upstream watch and gets one of its own
        // until it has caught up (merged at the next event, and only while fewer than five share it). So the
        // first change waits until the proxy takes no more watches, and one change reaches every store before
        // the one measured.
        if side.throughProxy { waitUntilSteady { etcdGRPCProxyCoalescingCount(proxy.endpoint) } }
        for _ in 0..<2 {
            stamp += 1
            guard (try? putter.put(stamp)) != nil, allArrive() else {
                return missing("a change did not reach every store of the fleet within 60 s")
            }
        }
        // A watch merged into another is cancelled upstream after its last event: the member's count settles.
        guard let grown = EtcdMemberUsage.of(pid), let watchers = waitUntilSteady({ etcdWatcherCount(node.endpoint) })
        else {
            return missing("the member's usage cannot be read")
        }
        context.progress("11. fleet, \(side.id): \(changes(context.settings)) changes to every store")
        guard let withFleet = cpuOfChanges(allArrive) else {
            return missing("a change did not reach every store of the fleet within 60 s")
        }
        let memory = Double(grown.residentBytes - before.residentBytes) / Double(count)
        let cpu = Double(withFleet - alone) / Double(count)
        var note: String?
        if side.transport != nil {
            child.send("errors")
            let line = child.readLine(deadline: monotonicNanoseconds() + 10_000_000_000) ?? "errors unknown"
            if line != "errors 0" { note = "the stores reported \(line.dropFirst("errors ".count))" }
        }
        return [
            ResultRow(id: names[0].id, name: names[0].name, unit: .bytes, statistics: Statistics(single: memory)),
            ResultRow(id: names[1].id, name: names[1].name, statistics: Statistics(single: cpu), note: note),
            ResultRow(
                id: names[2].id, name: names[2].name, unit: .count,
                statistics: Statistics(single: Double(watchers - watchersBefore)))
        ]
    }

    /// Polls `read` every 100 ms until three reads in a row agree (at most 10 s); returns the last read.
    @discardableResult
    private static func waitUntilSteady(_ read: () -> Int?) -> Int? {
        let deadline = monotonicNanoseconds() + 10_000_000_000
        var last = read(), agreeing = 1
        while agreeing < 3, monotonicNanoseconds() < deadline {
            sleepNanoseconds(100_000_000)
            let now = read()
            agreeing = now == last ? agreeing + 1 : 1
            last = now
        }
        return last
    }

    /// Polls (every 50 ms, at most 20 s) until the member serves at most `count` watchers again, so the
    /// member is stopped quiet.
    private static func waitForWatchers(_ endpoint: URL, atMost count: Int) {
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while monotonicNanoseconds() < deadline {
            if let now = etcdWatcherCount(endpoint), now <= count { return }
            sleepNanoseconds(50_000_000)
        }
    }
}
