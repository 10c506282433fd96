import EtcdLauncher
import Foundation
import ObservableDefaults

/// Group 9: `@ObservableCloud` objects (and the cloud store alone) through a real (throwaway, single-node)
/// etcd, beside the floor of raw etcd traffic: a write in this process reaching an observer in another
/// (propagation), one write reaching many processes (fan-out), and a property read. The subjects are in
/// CloudSubjects.swift.
enum CloudBenchmarks {
    static let number = 9

    /// How much the group measures.
    struct Sizes {
        var propagationSamples: Int
        var warmUpWrites: Int
        var fanOutProcesses: Int
        var fanOutWrites: Int

        static func of(_ settings: RunSettings) -> Sizes {
            settings.quick
                ? Sizes(propagationSamples: 20, warmUpWrites: 3, fanOutProcesses: 10, fanOutWrites: 5)
                : Sizes(propagationSamples: 200, warmUpWrites: 20, fanOutProcesses: 50, fanOutWrites: 30)
        }
    }

    /// How long one write may take to reach every observer before it counts as missed. Long: a write that
    /// is only slow (a loaded machine, a member's stalled disk) must not be superseded by the next one, which
    /// would make it look lost; the notes name the arrivals slower than ``slowArrivalNanoseconds``.
    static let arrivalTimeoutNanoseconds = 60_000_000_000
    /// An arrival slower than this is named in its row's note.
    static let slowArrivalNanoseconds = 5_000_000_000

    static func run(_ context: BenchContext) -> GroupResult {
        let sizes = Sizes.of(context.settings)
        var group = GroupResult(
            number: number, title: "Cloud (etcd)",
            method:
                "One throwaway single-node etcd on a loopback port. This process (A) stamps `CLOCK_MONOTONIC` and writes "
                + "the stamp; observer processes (B) read the same clock when the stamp reaches them. One write in flight at a "
                + "time: the next once every observer had the last and the writer its answer (a raw writer's call "
                + "returns with it; for a store the harness polls `hasPendingChanges`, untimed). The floor does the same with no library code: a put over a kept-alive plain socket and the event read "
                + "from a raw `/v3/watch` stream; the compare-and-swap floor writes as the library uploads (a `/v3/kv/txn` on the "
                + "key's modification revision, tracked from the previous answer) on the same kind of socket. Library: \(CloudSubjects.library.name), each process with its own store and "
                + "local copy (the targets are checked on it); store rows: \(CloudSubjects.store.name). Propagation sides "
                + "alternate in rounds; the fan-out sides run one after the other "
                + "(\(sizes.fanOutProcesses) processes each, started in parallel).")
        guard let executable = EtcdBinary.find() else {
            let reason = "skipped: etcd is not installed; install it with `\(EtcdBinary.installCommand)`"
            context.progress("9. cloud (etcd): \(reason)")
            group.rows = rowNames(sizes, apart: context.cloudStateRoot != nil).map {
                ResultRow.missing(id: $0.id, name: $0.name, reason: reason)
            }
            group.notes.append("Group 9 was \(reason).")
            return group
        }
        context.progress("9. cloud (etcd): starting a throwaway etcd node")
        let node: EtcdNode
        do {
            node = try EtcdNode(executable: executable)
        } catch {
            let reason = "etcd did not start: \(error)"
            group.rows = rowNames(sizes, apart: context.cloudStateRoot != nil).map {
                ResultRow.missing(id: $0.id, name: $0.name, reason: reason)
            }
            return group
        }
        defer { node.stop() }

        readRows(context, into: &group)
        writeRows(context, into: &group)
        propagation(context, node: node, sizes: sizes, into: &group)
        fanOut(context, node: node, sizes: sizes, into: &group)
        group.notes.append(
            "The library's write returns once memory is updated; the upload (a compare-and-swap transaction on a "
                + "kept-alive connection) follows on its sync thread, which then saves the local copy "
                + "while the member works (the store's background saver does, when the sync thread was busy). The observer saves server changes with its next save (within a second). The observer's store applies the watch event, then updates the object's property (its `onChange` runs there) or "
                + "calls the store observer, on the watch thread itself when nothing else is being delivered (else on its delivery queue, in order)."
        )
        group.notes.append(
            "Fan-out \"all arrivals\" pools every process's arrival of every write; \"last arrival\" is, per write, "
                + "the time until the last of the processes had it (with \(sizes.fanOutProcesses) processes the nearest-rank p99 of one "
                + "write's arrivals is its last one).")
        return group
    }

    /// Every row the group reports, for the skip path.
    private static func rowNames(_ sizes: Sizes, apart: Bool) -> [(id: String, name: String)] {
        [
            ("read.plain", readPlainName), ("read.cloud-macro", readMacroName), ("read.store", readStoreName),
            ("write.plain", writePlainName), ("write.cloud-macro", writeMacroName),
            ("write.plain.full", writePlainName),
            ("write.cloud-macro.full", writeFullStoreName)
        ]
            + (propagationPairs + (apart ? apartPairs : [])).map { ($0.id, $0.name) }
            + propagationPairs.filter { observerCPUFloors.keys.contains($0.id) }.map { observerCPURow($0.id, $0.name) }
            + [
                ("propagation.floor.call", floorCallName), ("propagation.library.call", libraryCallName),
                ("propagation.store.call", storeCallName)
            ]
            + fanOutSides.flatMap { side in
                [
                    ("fanout.\(side.role).all", fanOutName(side, "all arrivals", sizes)),
                    ("fanout.\(side.role).last", fanOutName(side, "last arrival per write", sizes)),
                    ("fanout.\(side.role).cpu", fanOutName(side, cpuWhat, sizes))
                ]
            }
    }

    // MARK: Read

    private static let readPlainName = "read: Int, plain `@Observable`"
    private static let readMacroName = "read: Int, `@ObservableCloud` property"
    private static let readStoreName = "read: Int, `CloudKeyValueStore.longLong(forKey:)` (from memory)"

    /// The `read.cloud-macro` row: `count` of a ``CloudReadSettings`` on the development store.
    private static func cloudMacroRead() -> PropertyReadBenchmarks.Entry {
        let object = opaque(CloudReadSettings(store: .development))
        return (
            "cloud-macro", readMacroName,
            { n in
                var sum = 0
                for _ in 0..<n { sum &+= object.count }
                return sum
            }
        )
    }

    /// The `@ObservableCloud` property read, interleaved with the same read of plain `@Observable` (as
    /// group 1 does), and the store's own getter for reference.
    private static func readRows(_ context: BenchContext, into group: inout GroupResult) {
        context.progress("9. cloud (etcd): property read")
        let plain = opaque(PlainSettings())
        let store = CloudKeyValueStore.development
        store.set(Int64(42), forKey: "bench.read.count")
        let entries: [PropertyReadBenchmarks.Entry] = [
            (
                "plain", readPlainName,
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= plain.count }
                    return sum
                }
            ),
            cloudMacroRead(),
            (
                "store", readStoreName,
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= Int(store.longLong(forKey: "bench.read.count")) }
                    return sum
                }
            )
        ]
        let statistics = Sampler.interleaved(context.settings, entries.map { Sampler.Candidate(body: $0.body) })
        for (entry, stats) in zip(entries, statistics) {
            group.append(ResultRow(id: "read.\(entry.variant)", name: entry.name, statistics: stats))
        }
        for entry in entries where entry.variant != "plain" { group.relate("read.\(entry.variant)", to: "read.plain") }
    }

    // MARK: Write

    private static let writePlainName = "write: Int, plain `@Observable`"
    private static let writeMacroName =
        "write: Int, `@ObservableCloud` property (development store: memory only, no upload or save)"
    private static let writeFullStoreName =
        "write: Int, `@ObservableCloud` property, the store holding \(fullStoreKeys) other keys"
    /// How many keys the `write.cloud-macro.full` row puts in the store first (iCloud's limit is 1,024).
    static let fullStoreKeys = 1_000

    /// Gives the development store `count` more keys, small values under their own prefix.
    static func fillDevelopmentStore(_ count: Int) {
        for index in 0..<count { CloudKeyValueStore.development.set(Int64(index), forKey: "bench.fill.\(index)") }
    }

    /// Takes the keys ``fillDevelopmentStore(_:)`` added out again.
    static func emptyDevelopmentStore(_ count: Int) {
        for index in 0..<count { CloudKeyValueStore.development.removeObject(forKey: "bench.fill.\(index)") }
    }

    /// The `@ObservableCloud` property write on the development store (a write of a new value updates the
    /// copy and the store's memory and returns), interleaved with the same write of plain `@Observable`;
    /// then the same with the store holding ``fullStoreKeys`` other keys (what a write costs must not grow
    /// with the store). Values never repeat, so no write is skipped as equal; no other object observes the
    /// written key.
    private static func writeRows(_ context: BenchContext, into group: inout GroupResult) {
        context.progress("9. cloud (etcd): property write")
        let plain = opaque(PlainSettings())
        let object = opaque(CloudWriteSettings(store: .development))
        var counter = 0
        let plainEntry: PropertyReadBenchmarks.Entry = (
            "plain", writePlainName,
            { n in
                for _ in 0..<n {
                    counter &+= 1
                    plain.count = counter
                }
                return plain.count
            }
        )
        func macroEntry(_ variant: String, _ name: String) -> PropertyReadBenchmarks.Entry {
            (
                variant, name,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        object.count = counter
                    }
                    return object.count
                }
            )
        }
        func measure(_ entries: [PropertyReadBenchmarks.Entry], suffix: String) {
            let statistics = Sampler.interleaved(context.settings, entries.map { Sampler.Candidate(body: $0.body) })
            for (entry, stats) in zip(entries, statistics) {
                group.append(ResultRow(id: "write.\(entry.variant)\(suffix)", name: entry.name, statistics: stats))
            }
            group.relate("write.cloud-macro\(suffix)", to: "write.plain\(suffix)")
        }
        measure([plainEntry, macroEntry("cloud-macro", writeMacroName)], suffix: "")
        fillDevelopmentStore(fullStoreKeys)
        defer { emptyDevelopmentStore(fullStoreKeys) }
        measure([plainEntry, macroEntry("cloud-macro", writeFullStoreName)], suffix: ".full")
    }

    // MARK: Propagation

    private static let floorCallName = "write call in A until it returns, floor (the put answered)"
    private static let libraryCallName = "write call in A until it returns, library (`@ObservableCloud` property write)"
    private static let storeCallName = "write call in A until it returns, store (`CloudKeyValueStore.set`)"

    /// The propagation pairs: writer end and observer end. The two mixed ones split the library's time
    /// between the ends, each with the other end of the gRPC floor (the target's); the store row tells the
    /// macro's share from the store's.
    private static var propagationPairs:
        [(id: String, name: String, writer: any CloudSubject.Type, observer: any CloudSubject.Type)]
    {
        let floor = CloudSubjects.floor, swapFloor = CloudSubjects.swapFloor, library = CloudSubjects.library,
            store = CloudSubjects.store
        let watchedSwapFloor = CloudSubjects.watchedSwapFloor, grpcFloor = CloudSubjects.grpcWatchedSwapFloor
        return [
            ("propagation.floor", "propagation, floor: " + floor.name, floor, floor),
            ("propagation.txn-floor", "propagation, compare-and-swap floor: " + swapFloor.name, swapFloor, swapFloor),
            (
                "propagation.txn-floor-watched",
                "propagation, compare-and-swap floor with the writer's own watch: " + watchedSwapFloor.name,
                watchedSwapFloor, watchedSwapFloor
            ),
            (
                "propagation.grpc-txn-floor-watched",
                "propagation, the same over gRPC (the library's transport): " + grpcFloor.name, grpcFloor, grpcFloor
            ),
            ("propagation.library", "propagation, library: " + library.name, library, library),
            (
                "propagation.library-write",
                "propagation, library write → raw gRPC watch event (the writing end's share; the other end is the gRPC floor's)",
                library, grpcFloor
            ),
            (
                "propagation.library-observe",
                "propagation, raw gRPC compare-and-swap, the writer also watching → library observer (the observing end's share)",
                grpcFloor, library
            ),
            ("propagation.store", "propagation, store only: " + store.name, store, store),
            (
                "propagation.library-gateway",
                "propagation, library over the JSON gateway (the transport before issue 31): "
                    + CloudSubjects.gatewayLibrary.name,
                CloudSubjects.gatewayLibrary, CloudSubjects.gatewayLibrary
            )
        ]
    }

    /// The propagation pairs whose observer process's CPU per change gets a row of its own (`<id>.cpu`), each
    /// with the floor row it is related to (`nil`: a floor itself): the library against the gRPC floor, and
    /// the library over the JSON gateway against the gateway's floor.
    static let observerCPUFloors: [String: String?] = [
        "propagation.grpc-txn-floor-watched": nil, "propagation.txn-floor-watched": nil,
        "propagation.library": "propagation.grpc-txn-floor-watched",
        "propagation.store": "propagation.grpc-txn-floor-watched",
        "propagation.library-gateway": "propagation.txn-floor-watched"
    ]

    /// The observer CPU row of the propagation pair `pairID` named `pairName`.
    private static func observerCPURow(_ pairID: String, _ pairName: String) -> (id: String, name: String) {
        (observerCPUID(pairID), pairName + ": observer CPU per change (user + system time ÷ arrivals)")
    }

    /// The id of the observer CPU row of the propagation pair `pairID`.
    static func observerCPUID(_ pairID: String) -> String { pairID + ".cpu" }

    /// The library and the store once more with their local copies in `--cloud-state-directory`, when given:
    /// on another filesystem than etcd's data, as in a fleet (a member's `fdatasync` then commits no journal
    /// that carries the local copies' inodes).
    private static var apartPairs:
        [(id: String, name: String, writer: any CloudSubject.Type, observer: any CloudSubject.Type)]
    {
        let library = CloudSubjects.library, store = CloudSubjects.store
        let apart = ", local copies apart from etcd's data (`--cloud-state-directory`): "
        return [
            ("propagation.library-apart", "propagation, library" + apart + library.name, library, library),
            ("propagation.store-apart", "propagation, store only" + apart + store.name, store, store)
        ]
    }

    private static func propagation(
        _ context: BenchContext, node: EtcdNode, sizes: Sizes, into group: inout GroupResult
    ) {
        context.progress("9. cloud (etcd): propagation, starting")
        let apart = context.cloudStateRoot == nil ? [] : apartPairs
        let pairs = propagationPairs + apart
        let sides = pairs.map { pair in
            let role = pair.id.replacingOccurrences(of: ".", with: "-")
            return CloudSide(
                context, writer: pair.writer, observer: pair.observer, role: role, endpoint: node.endpoint,
                observers: 1,
                stateDirectory: apart.contains { $0.id == pair.id } ? context.cloudStateDirectory("cloud-\(role)") : nil
            )
        }
        let rounds = context.settings.quick ? 1 : 5
        for side in sides { side.sample(sizes.warmUpWrites, keep: false) }
        let before = sides.map { $0.observerUsage() }
        for round in 0..<rounds {
            context.progress("9. cloud (etcd): propagation, round \(round + 1)/\(rounds)")
            let chunk = sizes.propagationSamples / rounds + (round < sizes.propagationSamples % rounds ? 1 : 0)
            for side in round % 2 == 0 ? sides : sides.reversed() { side.sample(chunk, keep: true) }
        }
        let after = sides.map { $0.observerUsage() }
        for side in sides { side.stop() }
        for (pair, side) in zip(pairs, sides) {
            group.append(side.row(id: pair.id, name: pair.name, pooled: true))
            if pair.id != "propagation.floor" { group.relate(pair.id, to: "propagation.floor") }
        }
        // What the observing process spends per change, for the pairs whose observer is one end whole.
        for (index, pair) in pairs.enumerated() where observerCPUFloors.keys.contains(pair.id) {
            let row = observerCPURow(pair.id, pair.name)
            group.append(sides[index].cpuRow(id: row.id, name: row.name, before: before[index], after: after[index]))
            if let floor = observerCPUFloors[pair.id] ?? nil { group.relate(row.id, to: observerCPUID(floor)) }
        }
        func side(_ id: String) -> CloudSide { sides[pairs.firstIndex { $0.id == id }!] }
        group.append(side("propagation.floor").callRow(id: "propagation.floor.call", name: floorCallName))
        group.append(side("propagation.library").callRow(id: "propagation.library.call", name: libraryCallName))
        group.append(side("propagation.store").callRow(id: "propagation.store.call", name: storeCallName))
        if let note = swapFloorNote(group) { group.notes.append(note) }
        if let root = context.cloudStateRoot { group.notes.append(apartNote(root, etcdData: node.directory)) }
    }

    /// Where the `-apart` rows' local copies were, and whether that is another filesystem than etcd's data.
    private static func apartNote(_ root: URL, etcdData: URL) -> String {
        func device(_ url: URL) -> UInt64? {
            var status = stat()
            return stat(url.path, &status) == 0 ? UInt64(status.st_dev) : nil
        }
        let place = "The `-apart` rows kept their local copies in \(root.deletingLastPathComponent().path) "
        guard let copies = device(root), let data = device(etcdData) else {
            return place + "(whether on another filesystem than etcd's data could not be told)."
        }
        return place
            + (copies == data
                ? "— the same filesystem as etcd's data (\(etcdData.path)): they measure nothing apart."
                : "— another filesystem than etcd's data (\(etcdData.path)).")
    }

    /// The propagation rows that write as the library does, each against the compare-and-swap floor (the
    /// ratio column holds the put floor's).
    private static func swapFloorNote(_ group: GroupResult) -> String? {
        guard let swapFloor = group.row("propagation.txn-floor"), swapFloor.statistics.p50 > 0 else { return nil }
        let ratios = [
            ("the same floor with the writer's own watch", "propagation.txn-floor-watched"),
            ("that over gRPC", "propagation.grpc-txn-floor-watched"),
            ("library", "propagation.library"), ("library write → raw gRPC watch event", "propagation.library-write"),
            ("store only", "propagation.store")
        ].compactMap { label, id in
            group.row(id).map { "\(label) \(Formatting.ratio($0.statistics.p50 / swapFloor.statistics.p50))" }
        }
        return
            "Against the compare-and-swap floor (p50 \(Formatting.duration(swapFloor.statistics.p50))), the rows that upload "
            + "as the library does: " + ratios.joined(separator: ", ") + "."
    }

    // MARK: Fan-out

    /// The fan-out sides, one after the other: the floor, the library, the store alone.
    private static var fanOutSides: [(role: String, subject: any CloudSubject.Type)] {
        [("floor", CloudSubjects.floor), ("library", CloudSubjects.library), ("store", CloudSubjects.store)]
    }

    /// What the fan-out's CPU rows measure, in their names.
    private static let cpuWhat = "observer CPU per change (user + system time ÷ arrivals, per process)"

    private static func fanOutName(
        _ side: (role: String, subject: any CloudSubject.Type), _ what: String, _ sizes: Sizes
    ) -> String {
        "fan-out to \(sizes.fanOutProcesses) processes, \(what), \(side.role): " + side.subject.name
    }

    private static func fanOut(_ context: BenchContext, node: EtcdNode, sizes: Sizes, into group: inout GroupResult) {
        for fanOutSide in fanOutSides {
            let role = fanOutSide.role, subject = fanOutSide.subject
            context.progress("9. cloud (etcd): fan-out, \(role): starting \(sizes.fanOutProcesses) observer processes")
            let side = CloudSide(
                context, writer: subject, observer: subject, role: "fanout-\(role)", endpoint: node.endpoint,
                observers: sizes.fanOutProcesses)
            side.sample(sizes.warmUpWrites, keep: false)
            context.progress("9. cloud (etcd): fan-out, \(role): \(sizes.fanOutWrites) writes")
            let before = side.observerUsage()
            side.sample(sizes.fanOutWrites, keep: true)
            let after = side.observerUsage()
            side.stop()
            group.append(
                side.row(id: "fanout.\(role).all", name: fanOutName(fanOutSide, "all arrivals", sizes), pooled: true))
            group.append(
                side.row(
                    id: "fanout.\(role).last", name: fanOutName(fanOutSide, "last arrival per write", sizes),
                    pooled: false))
            group.append(
                side.cpuRow(
                    id: "fanout.\(role).cpu", name: fanOutName(fanOutSide, cpuWhat, sizes), before: before, after: after
                ))
            if role != "floor" {
                group.relate("fanout.\(role).all", to: "fanout.floor.all")
                group.relate("fanout.\(role).last", to: "fanout.floor.last")
                group.relate("fanout.\(role).cpu", to: "fanout.floor.cpu")
            }
        }
    }
}

/// One pair measured in this run: a subject's writer here, a subject's observer processes (the same subject,
/// or the other one to split the time between the ends), and the samples taken.
final class CloudSide {
    private let writer: any CloudStampWriter
    private let observers: CloudObserverProcesses
    /// Per kept write: each observer's latency (`nil`: it did not arrive in time).
    private var writes: [[Double?]] = []
    /// Per kept write: how long the write call took to return in A.
    private var calls: [Double] = []
    private var writeErrors: [String] = []
    /// Writes whose answer the writer did not have within the arrival timeout (the next sample began anyway).
    private var unansweredWrites = 0

    /// Sets up namespace `bench-ROLE`: `writer`'s writing end here, then `observers` processes with `observer`'s
    /// observing end, each with its own state directory in `stateDirectory` (default: one in the scratch
    /// directory); ends the run if they cannot start.
    init(
        _ context: BenchContext, writer: any CloudSubject.Type, observer: any CloudSubject.Type, role: String,
        endpoint: URL, observers count: Int, stateDirectory: URL? = nil
    ) {
        let directory = stateDirectory ?? context.directory("cloud-\(role)")
        func place(_ name: String) -> CloudPlace {
            CloudPlace(
                endpoint: endpoint, namespace: "bench-\(role)",
                stateDirectory: directory.appendingPathComponent(name, isDirectory: true))
        }
        do {
            self.writer = try writer.writer(place("writer"))
            observers = try CloudObserverProcesses(
                subject: observer, places: (0..<count).map { place("observer-\($0)") })
        } catch {
            fail("cloud group, \(role): \(error)")
        }
    }

    /// Writes `count` stamps, one at a time, waiting each time until every observer had it (or the timeout)
    /// and the writer had the server's answer, so that no sample starts with the previous write in flight.
    func sample(_ count: Int, keep: Bool) {
        for _ in 0..<count {
            let stamp = monotonicNanoseconds()
            do {
                try writer.write(stamp: stamp)
            } catch {
                writeErrors.append("\(error)")
            }
            let returned = monotonicNanoseconds()
            if keep { calls.append(Double(returned - stamp)) }
            let arrivals = observers.arrivals(of: stamp, deadline: stamp + CloudBenchmarks.arrivalTimeoutNanoseconds)
            if keep { writes.append(arrivals.map { $0.map { Double($0 - stamp) } }) }
            if !writer.waitForAnswer(deadline: monotonicNanoseconds() + CloudBenchmarks.arrivalTimeoutNanoseconds) {
                unansweredWrites += 1
            }
        }
    }

    func stop() { observers.stop() }

    /// What each observer process has used so far (`nil`: it did not answer).
    func observerUsage() -> [ProcessUsage?] { observers.usage() }

    /// The row of each observer process's CPU per change over the kept writes: its CPU time between
    /// `before` and `after` (taken around them) ÷ the writes that reached it; the note gives the
    /// voluntary context switches per change (one is the wait for the next watch message; more are hand-offs
    /// between threads).
    func cpuRow(id: String, name: String, before: [ProcessUsage?], after: [ProcessUsage?]) -> ResultRow {
        var cpu: [Double] = [], switches: [Double] = []
        for index in 0..<observers.count {
            let arrived = writes.filter { $0[index] != nil }.count
            guard let start = before[index], let end = after[index], arrived > 0 else { continue }
            cpu.append(Double(end.cpuNanoseconds - start.cpuNanoseconds) / Double(arrived))
            switches.append(Double(end.voluntarySwitches - start.voluntarySwitches) / Double(arrived))
        }
        var notes: [String] = []
        if cpu.count != observers.count { notes.append("measured in \(cpu.count) of \(observers.count) processes") }
        if !switches.isEmpty {
            notes.append(
                "voluntary context switches per change: p50 " + String(format: "%.2f", Statistics(switches).p50))
        }
        return ResultRow(id: id, name: name, statistics: Statistics(cpu), note: notes.joined(separator: "; "))
    }

    /// The row of the write call's own time in A (from the stamp until it returned).
    func callRow(id: String, name: String) -> ResultRow {
        ResultRow(id: id, name: name, statistics: Statistics(calls))
    }

    /// The row of every arrival (`pooled`) or of each write's last arrival, with what was missed in its note.
    func row(id: String, name: String, pooled: Bool) -> ResultRow {
        let samples =
            pooled
            ? writes.flatMap { $0.compactMap { $0 } }
            : writes.compactMap { $0.contains(nil) ? nil : $0.compactMap { $0 }.max() }
        var notes: [String] = []
        let expected = writes.count * (pooled ? observers.count : 1)
        let timeout = CloudBenchmarks.arrivalTimeoutNanoseconds / 1_000_000_000,
            slowAfter = CloudBenchmarks.slowArrivalNanoseconds / 1_000_000_000
        if samples.count != expected { notes.append("\(samples.count) of \(expected) arrived within \(timeout) s") }
        let slow = samples.filter { $0 > Double(CloudBenchmarks.slowArrivalNanoseconds) }
        if let slowest = slow.max() {
            notes.append("\(slow.count) took over \(slowAfter) s (up to \(Formatting.duration(slowest)))")
        }
        if let last = writeErrors.last { notes.append("\(writeErrors.count) writes failed, e.g. \(last)") }
        if unansweredWrites > 0 {
            notes.append("\(unansweredWrites) writes still unanswered after \(timeout) s (the next write went ahead)")
        }
        if pooled, let maximum = samples.max() { notes.append("max \(Formatting.duration(maximum))") }
        return ResultRow(id: id, name: name, statistics: Statistics(samples), note: notes.joined(separator: "; "))
    }
}

/// Observer processes of one subject (`defaults-bench --child cloud-observer …`), started together, and the
/// arrival times they report.
final class CloudObserverProcesses {
    private let children: [ChildProcess]
    var count: Int { children.count }

    /// Starts one process per place and waits (bounded: 60 s for all) until each printed "ready".
    init(subject: any CloudSubject.Type, places: [CloudPlace]) throws {
        children = try places.map {
            try ChildProcess([
                "cloud-observer", subject.id, $0.endpoint.absoluteString, $0.namespace, $0.stateDirectory.path
            ])
        }
        let deadline = monotonicNanoseconds() + 60_000_000_000
        for (index, child) in children.enumerated() {
            guard let line = child.readLine(deadline: deadline) else {
                stop()
                throw EtcdGatewayError("observer process \(index) of \(subject.id) was not ready within 60 s")
            }
            guard line == "ready" else {
                stop()
                throw EtcdGatewayError("observer process \(index) of \(subject.id) did not start: \(line)")
            }
        }
    }

    /// When each process saw `stamp` (`nil`: not by `deadline`). Older stamps a process reports late are skipped.
    func arrivals(of stamp: Int, deadline: Int) -> [Int?] {
        children.map { child in
            while let line = child.readLine(deadline: deadline) {
                let fields = line.split(separator: " ")
                guard fields.count == 3, fields[0] == "arrived", let seen = Int(fields[1]), let time = Int(fields[2])
                else { continue }
                if seen == stamp { return time }
                if seen > stamp { return nil }
            }
            return nil
        }
    }

    /// Asks every process what it has used so far and waits (bounded: 10 s for all) for the answers;
    /// `nil` for a process that did not answer. Call it between writes: arrival lines read meanwhile are
    /// late ones and are skipped.
    func usage() -> [ProcessUsage?] {
        for child in children { child.send("usage") }
        let deadline = monotonicNanoseconds() + 10_000_000_000
        return children.map { child in
            while let line = child.readLine(deadline: deadline) {
                if let usage = ProcessUsage(line: line) { return usage }
            }
            return nil
        }
    }

    /// Ends every process (end of input) and waits for it.
    func stop() {
        for child in children { child.closeInput() }
        for child in children { child.wait() }
    }
}
