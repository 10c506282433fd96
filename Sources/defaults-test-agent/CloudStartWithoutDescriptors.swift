import Foundation
import ObservableDefaults

/// `cloud-start-without-descriptors STATE_DIR ENDPOINTS NAMESPACE SET_KEY SET_VALUE REMOVE_KEY WAIT_KEY`: a cloud
/// store (local-only when ENDPOINTS is `-`) made while no file descriptor is left, so its local copy cannot
/// be read at start. Prints "started KEYS" (what it holds then), "problem MESSAGE [errno N]" per current problem, sets
/// SET_KEY and removes REMOVE_KEY, frees the descriptors ("freed"), waits (≤ 20 s) until WAIT_KEY has a value
/// and, for an etcd store, until every write is on the server (≤ 60 s); then prints "values K=V,…" and
/// "problem …" again, and exits (the at-exit flush saves the copy). Exit 4: WAIT_KEY never came; 5: not synced.
/// Without `warmingUpDispatch`, Dispatch has opened none of its descriptors when they run out.
func runCloudStartWithoutDescriptors(_ arguments: [String], warmingUpDispatch: Bool = true) -> Never {
    let directory = URL(fileURLWithPath: arguments[0], isDirectory: true)
    let taken = takeEveryDescriptor(warmingUpDispatch: warmingUpDispatch)

    let store: CloudKeyValueStore
    if arguments[1] == "-" {
        store = CloudKeyValueStore.localOnly(directory: directory)
    } else {
        let configuration = EtcdConfiguration(
            endpoints: arguments[1].split(separator: ",").compactMap { URL(string: String($0)) },
            namespace: arguments[2],
            stateDirectory: directory)
        do { store = try CloudKeyValueStore(etcd: configuration) } catch { fail("\(error)") }
    }
    func printProblems() {
        let problems = store.currentErrors.map { "\($0)" + ($0.errorNumber.map { " errno \($0)" } ?? "") }
        for problem in problems.sorted() { emit("problem \(problem)") }
    }
    emit("started " + store.values().keys.sorted().joined(separator: ","))
    printProblems()
    store.set(parseValue(arguments[4]), forKey: arguments[3])
    store.removeObject(forKey: arguments[5])
    freeDescriptors(taken)
    emit("freed")
    guard waitUntil(seconds: 20, { store.value(forKey: arguments[6]) != nil }) else { exit(4) }
    if store.mode == .etcd {
        guard waitUntil(seconds: 60, { store.synchronize(timeout: 5) && !store.hasPendingChanges }) else { exit(5) }
    }
    emit(
        "values "
            + store.values().keys.sorted().map {
                "\($0)=\(store.string(forKey: $0) ?? "\(store.value(forKey: $0).map { "\($0)" } ?? "nil")")"
            }.joined(separator: ","))
    printProblems()
    exit(0)
}
