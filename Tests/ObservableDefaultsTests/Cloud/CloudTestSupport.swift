import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// One "machine": an etcd store with its own state directory, over `transport` (default: the default's,
/// gRPC), sharing the process's connections unless told otherwise, probing every `probeInterval` seconds.
/// Requests get `requestTimeout` seconds; by default 2, or with a user 10: etcd hashes the password of a
/// login with bcrypt, which on a busy machine can take longer than 2 s.
func cloudMachine(
    _ endpoints: [URL], namespace: String, state: URL, user: String? = nil, password: String? = nil,
    limits: CloudLimits = .iCloud, transport: EtcdConfiguration.Transport? = nil, sharesConnections: Bool = true,
    requestTimeout: TimeInterval? = nil, probeInterval: TimeInterval = 0.5
) throws -> CloudKeyValueStore {
    var configuration = EtcdConfiguration(
        endpoints: endpoints, namespace: namespace, user: user, password: password, stateDirectory: state,
        limits: limits, requestTimeout: requestTimeout ?? (user == nil ? 2 : 10), probeInterval: probeInterval)
    if let transport { configuration.transport = transport }
    configuration.sharesConnections = sharesConnections
    return try CloudKeyValueStore(etcd: configuration)
}

/// The local copy of a machine that wrote `kept` = "server" and synchronized, then was released (a whole
/// save of what the server has): the start of tests that then change the copy by hand.
func releasedMachineCopy(_ endpoints: [URL], namespace: String, state: URL) throws -> URL {
    let store = try cloudMachine(endpoints, namespace: namespace, state: state)
    store.set("server", forKey: "kept")
    #expect(store.synchronize())
    return try #require(store.localCopyURL)
}

/// A namespace no other test uses.
func freshNamespace(_ label: String = #function) -> String {
    "test-\(label.filter { $0.isLetter })-\(UInt32.random(in: 0 ... .max))"
}

/// A raw etcd read of `namespace/key`: its value text, or nil when absent.
func rawEtcdValue(_ endpoint: URL, _ namespace: String, _ key: String, token: String? = nil) throws -> String? {
    let body = "{\"key\":\"\(Data("\(namespace)/\(key)".utf8).base64EncodedString())\"}"
    guard
        let answer = try synchronousPost(
            endpoint, "/v3/kv/range", body, headers: token.map { ["Authorization": $0] } ?? [:]),
        let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
        let kvs = object["kvs"] as? [[String: Any]], let value = kvs.first?["value"] as? String
    else { return nil }
    return String(decoding: Data(base64Encoded: value) ?? Data(), as: UTF8.self)
}

/// A raw etcd put of `namespace/key` = `text` (no library code), e.g. what `etcdctl put` does.
@discardableResult
func rawEtcdPut(_ endpoint: URL, _ namespace: String, _ key: String, _ text: String) throws -> Bool {
    let body =
        "{\"key\":\"\(Data("\(namespace)/\(key)".utf8).base64EncodedString())\",\"value\":\"\(Data(text.utf8).base64EncodedString())\"}"
    return try synchronousPost(endpoint, "/v3/kv/put", body) != nil
}

/// A raw etcd delete of `namespace/key` (no library code), e.g. what `etcdctl del` does.
@discardableResult
func rawEtcdDelete(_ endpoint: URL, _ namespace: String, _ key: String) throws -> Bool {
    let body = "{\"key\":\"\(Data("\(namespace)/\(key)".utf8).base64EncodedString())\"}"
    return try synchronousPost(endpoint, "/v3/kv/deleterange", body) != nil
}

/// The hung-member case: `watcher` watches through member 0 of `cluster`, `writer` writes through the
/// others. Member 0 is stopped with SIGSTOP (its stream stays open and silent) and `writer` writes: the
/// watcher's probe must find the member hung, report it ("does not answer") and move its watch on, so the
/// value arrives. Prints the gap from SIGSTOP to the value after `label`.
func expectHungWatchedMemberLeftBehind(
    _ cluster: EtcdCluster, watcher: CloudKeyValueStore, writer: CloudKeyValueStore, label: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(watcher.synchronize() && writer.synchronize(), sourceLocation: sourceLocation)
    let recorder = CloudRecorder()
    let errors = ErrorRecorder()
    let observations = [watcher.observe { recorder.record($0) }, watcher.observeErrors { errors.record($0) }]
    defer { observations.forEach { $0.cancel() } }

    cluster.pause(0, sourceLocation: sourceLocation)
    defer { cluster.pause(0, resume: true) }
    let pausedAt = ContinuousClock.now
    writer.set("after the hang", forKey: "k")
    #expect(writer.synchronize(timeout: 20), sourceLocation: sourceLocation)
    #expect(recorder.waitFor(key: "k", timeout: .seconds(20)), sourceLocation: sourceLocation)
    print("\(label): \(ContinuousClock.now - pausedAt) from SIGSTOP of the watched member to the value")
    #expect(watcher.string(forKey: "k") == "after the hang", sourceLocation: sourceLocation)
    #expect(errors.errors.contains { $0.message.contains("does not answer") }, sourceLocation: sourceLocation)
}

/// A cloud state holding `values`, as a local copy saves it.
func cloudState(_ values: [String: DefaultsValue]) -> CloudState {
    var state = CloudState()
    for (key, value) in values { state.setValue(value, forKey: key) }
    return state
}

/// What a store's local copies hold on disk now, as a restarted store would load them (the newest complete
/// slot with the journal's records after it), in the slots' JSON form (see `CloudLocalCopy`).
func localCopyOnDisk(_ url: URL) throws -> [String: DefaultsValue] {
    guard let state = CloudLocalCopyShare.currentState(at: url) else { return [:] }
    return CloudLocalCopy.encode(state)
}

extension EtcdConfiguration {
    /// This configuration over etcd's JSON gateway: for the tests of the HTTP/1.1 client (their hostile
    /// endpoints and proxies speak HTTP/1.1).
    var overGateway: EtcdConfiguration {
        var configuration = self
        configuration.transport = .gateway
        return configuration
    }
}
