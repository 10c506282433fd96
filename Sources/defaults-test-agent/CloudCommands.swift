import Foundation
import Observation
import ObservableDefaults

/// `cloud ENDPOINTS NAMESPACE STATE_DIR COMMAND…`: the other "machine" of the cloud tests.
func runCloudCommand(_ arguments: [String]) {
    let endpoints = arguments[0].split(separator: ",").compactMap { URL(string: String($0)) }
    let configuration = EtcdConfiguration(
        endpoints: endpoints, namespace: arguments[1], tls: EtcdTLS(environment: ProcessInfo.processInfo.environment),
        stateDirectory: URL(fileURLWithPath: arguments[2]))
    let store: CloudKeyValueStore
    do { store = try CloudKeyValueStore(etcd: configuration) } catch { fail("\(error)") }
    let command = Array(arguments.dropFirst(3))
    switch command.first {
    case "set" where command.count >= 3 && command.count % 2 == 1:
        for index in stride(from: 1, to: command.count, by: 2) {
            store.set(parseValue(command[index + 1]), forKey: command[index])
        }
        exit(store.synchronize(timeout: 30) ? 0 : 3)
    case "set-and-exit" where command.count >= 3 && command.count % 2 == 1:
        // No synchronize: the process ends right after the last `set` returned (the at-exit flush's test).
        for index in stride(from: 1, to: command.count, by: 2) {
            store.set(parseValue(command[index + 1]), forKey: command[index])
        }
        exit(0)
    case "write-series" where command.count == 3:
        guard let count = Int(command[2]) else { fail("COUNT must be a number") }
        emit("ready")
        for index in 0..<count {
            store.set(DefaultsValue.integer(index), forKey: "\(command[1])\(index)")
            guard store.synchronize(timeout: 30) else { fail("value \(index) did not reach the server within 30 s") }
        }
        exit(0)
    case "write-many" where command.count == 3 || (command.count == 4 && command[3] == "hold"):
        writeMany(store, prefix: command[1], count: command[2], hold: command.count == 4)
    case "watch" where command.count == 1:
        let observation = store.observe { change in
            let values = change.keys.sorted().map { "\($0)=\(store.value(forKey: $0).map { "\($0)" } ?? "nil")" }
            emit("\(change.reason) " + values.joined(separator: " "))
        }
        _ = store.synchronize(timeout: 30)
        emit("ready")
        while FileHandle.standardInput.availableData.count > 0 {}
        observation.cancel()
        exit(0)
    case "increment" where command.count == 3:
        // COUNT atomic increments of KEY with update(forKey:), then synchronize; prints "done SECONDS".
        guard let count = Int(command[2]) else { fail("COUNT must be a number") }
        emit("ready")
        let start = ContinuousClock.now
        for _ in 0..<count {
            do {
                try store.update(Int.self, forKey: command[1]) { ($0 ?? 0) + 1 }
            } catch {
                fail("the update failed: \(error)")
            }
        }
        guard store.synchronize(timeout: 60) else { fail("the increments did not reach the server within 60 s") }
        let elapsed = ContinuousClock.now - start
        emit("done \(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)")
        exit(0)
    case "batch" where command.count >= 3 && command.count % 2 == 1:
        // One performBatchUpdates of the KEY VALUE pairs, then synchronize (exit 3 if it failed).
        store.performBatchUpdates {
            for index in stride(from: 1, to: command.count, by: 2) {
                store.set(parseValue(command[index + 1]), forKey: command[index])
            }
        }
        exit(store.synchronize(timeout: 30) ? 0 : 3)
    case "object" where command.count == 1:
        runCloudObject(store)
    case "confirm-loop" where command.count == 1:
        runConfirmLoop(store)
    default:
        fail("unknown cloud command: \(command.joined(separator: " "))")
    }
}

/// `cloud … confirm-loop`: prints "ready" once synchronized; then, for each line `set KEY VALUE` of standard
/// input, sets the value and prints "confirmed KEY" as soon as the server confirmed it (no `synchronize()`,
/// which would put every write on disk first), or "unconfirmed KEY" after 30 s. Exits when standard input
/// closes.
func runConfirmLoop(_ store: CloudKeyValueStore) -> Never {
    emit(store.synchronize(timeout: 30) ? "ready" : "ready (not synced)")
    while let line = readLine() {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard words.count == 3, words[0] == "set" else {
            emit("unknown: \(line)")
            continue
        }
        store.set(parseValue(words[2]), forKey: words[1])
        let deadline = ContinuousClock.now + .seconds(30)
        while store.hasPendingChanges, ContinuousClock.now < deadline { usleep(200) }
        emit((store.hasPendingChanges ? "unconfirmed " : "confirmed ") + words[1])
    }
    exit(0)
}

/// `cloud … object`: a `CloudFleet` (prefix `fleet_`) on the store. Prints its values at once ("values …",
/// before any network answer), "ready" once synchronized, and "changed NAME" whenever Observation reports a
/// change of a property. Standard input: `set workers N`, `set logLevel TEXT`, `set hosts A,B`, `values`,
/// `sync` (prints "synced" or "sync failed"); it exits when standard input closes.
func runCloudObject(_ store: CloudKeyValueStore) -> Never {
    let fleet = AgentFleet(CloudFleet(store: store))
    emit(fleet.values)
    for name in AgentFleet.names { fleet.track(name) }
    emit(store.synchronize(timeout: 30) ? "ready" : "ready (not synced)")
    while let line = readLine() {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        switch (words.first, words.count) {
        case ("set", 3): fleet.set(words[1], words[2])
        case ("values", 1): emit(fleet.values)
        case ("sync", 1): emit(store.synchronize(timeout: 30) ? "synced" : "sync failed")
        default: emit("unknown: \(line)")
        }
    }
    exit(0)
}

/// The agent's `CloudFleet`, used from the input loop and Observation's change handlers (one at a time: the
/// handlers only print and re-arm).
final class AgentFleet: @unchecked Sendable {
    static let names = ["workers", "logLevel", "limit", "hosts", "endpoint"]
    let fleet: CloudFleet
    init(_ fleet: CloudFleet) { self.fleet = fleet }

    var values: String {
        "values workers=\(fleet.workers) logLevel=\(fleet.logLevel) limit=\(fleet.limit.map { "\($0)" } ?? "nil") "
            + "hosts=\(fleet.hosts.joined(separator: ",")) endpoint=\(fleet.endpoint.host):\(fleet.endpoint.port)"
    }

    func set(_ name: String, _ value: String) {
        switch name {
        case "workers": fleet.workers = Int(value) ?? 0
        case "logLevel": fleet.logLevel = value
        case "hosts": fleet.hosts = value.split(separator: ",").map(String.init)
        default: emit("unknown property: \(name)")
        }
    }

    /// Reports the next change of `name`, then tracks it again.
    func track(_ name: String) {
        withObservationTracking {
            switch name {
            case "workers": _ = fleet.workers
            case "logLevel": _ = fleet.logLevel
            case "limit": _ = fleet.limit
            case "hosts": _ = fleet.hosts
            default: _ = fleet.endpoint
            }
        } onChange: { [self] in
            emit("changed \(name)")
            DispatchQueue.global().async { self.track(name) }
        }
    }
}

/// `… write-many PREFIX COUNT [hold]`: writes PREFIX0 … = 0 … and `shared` = "PREFIX-i" for each i, without
/// waiting for the server; prints "done NANOSECONDS" (the wall-clock time of the last write of `shared`)
/// once every write is in the local copy. Then exits, or with `hold` waits to be killed.
func writeMany(_ store: CloudKeyValueStore, prefix: String, count text: String, hold: Bool) -> Never {
    guard let count = Int(text) else { fail("COUNT must be a number") }
    var last: Int64 = 0
    for index in 0..<count {
        store.set(index, forKey: "\(prefix)\(index)")
        store.set("\(prefix)-\(index)", forKey: "shared")
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        last = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
    _ = store.synchronize(timeout: 0.2)  // the local copy holds every write when it returns
    emit("done \(last)")
    if hold { while true { sleep(60) } }
    exit(0)
}
