import Foundation
import ObservableDefaults

/// `cloud ENDPOINTS NAMESPACE STATE_DIR COMMAND…`: the other "machine" of the cloud tests.
func runCloudCommand(_ arguments: [String]) {
    let endpoints = arguments[0].split(separator: ",").compactMap { URL(string: String($0)) }
    let configuration = EtcdConfiguration(
        endpoints: endpoints, namespace: arguments[1], stateDirectory: URL(fileURLWithPath: arguments[2]))
    let store: CloudKeyValueStore
    do { store = try CloudKeyValueStore(etcd: configuration) } catch { fail("\(error)") }
    let command = Array(arguments.dropFirst(3))
    switch command.first {
    case "set" where command.count >= 3 && command.count % 2 == 1:
        for index in stride(from: 1, to: command.count, by: 2) { store.set(parseValue(command[index + 1]), forKey: command[index]) }
        exit(store.synchronize(timeout: 30) ? 0 : 3)
    case "write-series" where command.count == 3:
        guard let count = Int(command[2]) else { fail("COUNT must be a number") }
        emit("ready")
        for index in 0..<count {
            store.set(DefaultsValue.integer(index), forKey: "\(command[1])\(index)")
            guard store.synchronize(timeout: 30) else { fail("value \(index) did not reach the server within 30 s") }
        }
        exit(0)
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
    default:
        fail("unknown cloud command: \(command.joined(separator: " "))")
    }
}
