import Foundation
import Testing
@testable import ObservableDefaults

/// What a server value's recorded size is (it counts against the limits like a local write's).
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
}
