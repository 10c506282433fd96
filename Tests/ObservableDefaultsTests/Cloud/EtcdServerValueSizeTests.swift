import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Values of every size between machines, and what a server value's recorded size is (it counts against the
/// limits like a local write's).
@Suite(.serialized, EtcdCluster.required) struct EtcdServerValueSizeTests {
    let directory = TemporaryDirectory()

    @Test func aServerValuesSizeIsItsTextAsTheServerHoldsIt() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let observed = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("observed"))
        #expect(observed.synchronize(timeout: 20))
        let compact = "{\"a\":1}"  // written by hand; the store's own text would be pretty-printed
        #expect(CloudValueText.encode(.dictionary(["a": .integer(1)])).count != compact.utf8.count)
        try rawEtcdPut(etcd.endpoints[0], namespace, "watched", compact)
        #expect(eventually(timeout: .seconds(15)) { observed.dictionary(forKey: "watched") != nil })
        #expect(observed.core.state.withLock { $0.sizes["watched"] } == compact.utf8.count)

        // Read with the namespace (a new store: its first read) too.
        let reader = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("reader"))
        #expect(reader.synchronize(timeout: 20))
        #expect(reader.core.state.withLock { $0.sizes["watched"] } == compact.utf8.count)
    }

    /// JSON texts of 100 bytes (one small message), 3,000 (past the gateway's buffer: etcd sends the watch
    /// message and its newline as two chunks), 70,000 (many of the client's reads) and exactly the per-value
    /// limit: each reaches the other machine whole, announced once, and a new machine's first read takes the
    /// largest in.
    @Test func valuesUpToThePerValueLimitReachAnotherMachineWhole() throws {
        let etcd = try EtcdCluster.sharedNode()
        let namespace = freshNamespace()
        let writer = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("writer"))
        let reader = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("reader"))
        #expect(writer.synchronize(timeout: 20) && reader.synchronize(timeout: 20))
        let heard = CloudRecorder()
        let observation = reader.observe { heard.record($0) }
        defer { observation.cancel() }

        let sizes = [100, 3_000, 70_000, CloudLimits.iCloud.maximumValueBytes]
        for (index, size) in sizes.enumerated() {
            let key = "value\(index)"
            let text = String(repeating: String(UnicodeScalar(UInt8(ascii: "a") + UInt8(index))), count: size - 2)
            #expect(CloudValueText.encode(.string(text)).count == size)
            if index > 0 { writer.removeObject(forKey: "value\(index - 1)") }  // the total stays within the limit
            writer.set(text, forKey: key)
            #expect(writer.synchronize(timeout: 20), "\(size) bytes")
            #expect(heard.waitFor(key: key, reason: .serverChange, timeout: .seconds(20)), "\(size) bytes")
            #expect(reader.string(forKey: key) == text, "\(size) bytes")
            #expect(reader.core.state.withLock { $0.sizes[key] } == size)
        }
        #expect(writer.currentErrors.isEmpty && reader.currentErrors.isEmpty)
        for index in sizes.indices {
            #expect(
                heard.changes.filter { $0.keys.contains("value\(index)") }.count == (index == sizes.count - 1 ? 1 : 2))
        }

        let newcomer = try cloudMachine(etcd.endpoints, namespace: namespace, state: directory.file("newcomer"))
        #expect(newcomer.synchronize(timeout: 20))
        #expect(newcomer.string(forKey: "value3")?.utf8.count == sizes[3] - 2)
        #expect(newcomer.dictionaryRepresentation.count == 1)
    }
}
