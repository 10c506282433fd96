import Foundation
import ObservableDefaults
import Synchronization

/// The fleet process of group 11:
///
///     cloud-fleet CONFIGURATION STATE_PARENT COUNT [own-connections]
///                                    open COUNT `CloudKeyValueStore`s on the cloud address CONFIGURATION (an
///                                    `etcd://` URL, `?transport=` included), each with its own watch and
///                                    local copy (in STATE_PARENT/N), each observing "stamp"; over gRPC they
///                                    share one connection (the default), or with `own-connections` each has
///                                    its own (`EtcdConfiguration.sharesConnections` false); print "ready"
///                                    once every store synchronised ("error WHY" if one cannot); for each
///                                    input line "wait STAMP", print "arrived STAMP N" once every store has
///                                    seen the stamp (N: how many had within 60 s); exit at end of input
///     cloud-fleet-raw ENDPOINT KEY COUNT [shared | stream]
///                                    the floor: COUNT raw gRPC watches of KEY at the member ENDPOINT (an
///                                    `http://` URL), each on its own connection, with `shared` COUNT Watch
///                                    streams on one connection, or with `stream` COUNT watch IDs on ONE
///                                    Watch stream; no library code; then as cloud-fleet (every event of
///                                    every watch counts as one arrival)
enum FleetChildMode {
    static func run(_ arguments: [String]) -> Bool {
        if arguments.first == "cloud-fleet-raw", (4...5).contains(arguments.count) { return runRaw(arguments) }
        guard arguments.first == "cloud-fleet", (4...5).contains(arguments.count) else { return false }
        guard let count = Int(arguments[3]), count > 0 else { fail("cloud-fleet: COUNT must be a positive integer") }
        let ownConnections = arguments.count == 5
        guard !ownConnections || arguments[4] == "own-connections" else {
            fail("cloud-fleet: the argument after COUNT can only be own-connections")
        }
        let arrivals = FleetArrivals()
        let errors = FleetErrors()
        let parent = URL(fileURLWithPath: arguments[2], isDirectory: true)
        let opened = openAll(count, each: "store") { index in
            var configuration = try EtcdConfiguration(url: arguments[1])
            configuration.stateDirectory = parent.appendingPathComponent(String(index), isDirectory: true)
            configuration.sharesConnections = !ownConnections
            let store = try CloudKeyValueStore(etcd: configuration)
            guard store.synchronize(timeout: 60) else {
                throw FleetOpenFailure(
                    "store \(index) did not synchronise within 60 s: "
                        + store.currentErrors.map(\.description).joined(separator: "; "))
            }
            let observation = store.observe(keys: ["stamp"]) { _ in
                arrivals.record(Int(store.longLong(forKey: "stamp")))
            }
            return (store, observation, store.observeErrors { errors.record($0.description) })
        }
        emit("ready")
        answerWaits(arrivals, count: count, errors: errors)
        withExtendedLifetime(opened) {}
        return true
    }

    private static func runRaw(_ arguments: [String]) -> Bool {
        guard let endpoint = URL(string: arguments[1]), let count = Int(arguments[3]), count > 0 else {
            fail("cloud-fleet-raw: ENDPOINT must be a URL and COUNT a positive integer")
        }
        let layout: (EtcdGRPCRawWatch.Layout, String)?
        switch arguments.count == 5 ? arguments[4] : nil {
        case nil: layout = nil
        case "shared": layout = (.streams(count), "\(count) Watch streams on one connection")
        case "stream": layout = (.watchIDs(count), "\(count) watches on one Watch stream")
        default: fail("cloud-fleet-raw: the argument after COUNT can only be shared or stream")
        }
        let arrivals = FleetArrivals()
        let opened: [EtcdGRPCRawWatch]
        if let (layout, what) = layout {
            do {
                opened = [
                    try EtcdGRPCRawWatch(endpoint: endpoint, key: arguments[2], layout: layout) { arrivals.record($0) }
                ]
            } catch {
                emit("error \(what): \(error)")
                exit(1)
            }
        } else {
            opened = openAll(count, each: "watch") { _ in
                try EtcdGRPCRawWatch(endpoint: endpoint, key: arguments[2]) { arrivals.record($0) }
            }
        }
        emit("ready")
        answerWaits(arrivals, count: count)
        for watch in opened { watch.stop() }
        return true
    }

    /// Opens `count` members of the fleet at once (`open` makes member N); on the first failure prints
    /// "error WHY" (naming the member as `each` N) and exits.
    private static func openAll<Member: Sendable>(
        _ count: Int, each: String, _ open: @Sendable (Int) throws -> Member
    ) -> [Member] {
        let opened = Mutex<[Member]>([])
        let failure = Mutex<String?>(nil)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                let member = try open(index)
                opened.withLock { $0.append(member) }
            } catch {
                let why = (error as? FleetOpenFailure)?.description ?? "\(each) \(index): \(error)"
                failure.withLock { $0 = $0 ?? why }
            }
        }
        if let why = failure.withLock({ $0 }) {
            emit("error \(why)")
            exit(1)
        }
        return opened.withLock { $0 }
    }

    /// For each input line "wait STAMP", prints "arrived STAMP N" once all `count` watchers have the stamp (N:
    /// how many had within 60 s); for "errors", "errors N FIRST" (how many errors the stores reported so
    /// far, and the most frequent one); returns at the end of input.
    private static func answerWaits(_ arrivals: FleetArrivals, count: Int, errors: FleetErrors = FleetErrors()) {
        while let line = readLine() {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == "wait", let stamp = Int(fields[1]) {
                emit("arrived \(stamp) \(arrivals.wait(for: stamp, count: count, seconds: 60))")
            } else if line == "errors" {
                emit("errors \(errors.summary)")
            }
        }
    }
}

/// Why a member of the fleet could not be opened, said whole.
struct FleetOpenFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The errors the stores of the fleet reported, counted by text.
final class FleetErrors: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func record(_ text: String) {
        // Ports and stamps differ from store to store and run to run: counted as one text.
        let text = String(text.map { $0.isNumber ? "#" : $0 }.prefix(300))
        counts.withLock { $0[text, default: 0] += 1 }
    }

    /// "N: the three most frequent texts" (N: how many in all), or "0".
    var summary: String {
        counts.withLock { counts in
            let total = counts.values.reduce(0, +)
            guard total > 0 else { return "0" }
            let top = counts.sorted { $0.value > $1.value }.prefix(3).map { "\($0.value)× \($0.key)" }
            return "\(total): " + top.joined(separator: " | ")
        }
    }
}

/// How many stores have seen each stamp, and a wait for all of them.
final class FleetArrivals: Sendable {
    private let counts = Mutex<[Int: Int]>([:])
    private let changed = DispatchSemaphore(value: 0)

    func record(_ stamp: Int) {
        counts.withLock { $0[stamp, default: 0] += 1 }
        changed.signal()
    }

    /// How many stores had `stamp` when all `count` had it, or when `seconds` passed.
    func wait(for stamp: Int, count: Int, seconds: Int) -> Int {
        let deadline = DispatchTime.now() + .seconds(seconds)
        while true {
            let seen = counts.withLock { $0[stamp, default: 0] }
            if seen >= count || changed.wait(timeout: deadline) == .timedOut {
                return counts.withLock { $0.removeValue(forKey: stamp) ?? 0 }
            }
        }
    }
}
