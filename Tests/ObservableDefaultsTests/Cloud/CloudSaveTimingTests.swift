import Foundation
import Testing
@testable import ObservableDefaults

#if canImport(Glibc)
import Glibc
#endif

/// When a syncing store's local copy is written: a local write after its upload, bounded when the upload
/// hangs; and what a server value's recorded size is.
@Suite(.serialized) struct CloudSaveTimingTests {
    let directory = TemporaryDirectory()

    @Test func aWriteIsSavedAfterItsUploadEndsOrWithinTheUploadWaitWhenTheServerDoesNotAnswer() throws {
        let silent = try SilentListener()
        let store = try cloudMachine([silent.url], namespace: "n", state: directory.file("silent"))
        let file = try #require(store.localCopyURL)
        store.set("kept", forKey: "k")
        // The upload (the first read, in fact) hangs: the save waits for it, not longer than the upload wait.
        usleep(40_000)
        #expect((try? contentsOnDisk(file))?["values"]?.dictionaryValue?["k"] == nil, "saved before the upload ended")
        #expect(eventually(timeout: .milliseconds(1500)) {
            (try? contentsOnDisk(file))?["values"]?.dictionaryValue?["k"] == .string("kept")
        }, "the write was not saved within the upload wait while the server did not answer")
        #expect(try contentsOnDisk(file)["pending"]?.dictionaryValue?["k"] != nil)
    }
}

/// The same against a real etcd node.
@Suite(.serialized, EtcdCluster.required) struct EtcdSaveTimingTests {
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

/// A loopback TCP port that accepts connections (the kernel's backlog) and never answers: a hung server.
final class SilentListener: Sendable {
    let port: UInt16
    private let listener: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                bind(listener, raw, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw DefaultsError(.cloud, message: "the silent listener cannot listen: \(String(cString: strerror(errno)))") }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(listener) }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
}
