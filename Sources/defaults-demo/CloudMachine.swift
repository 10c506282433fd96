import Foundation
import ObservableDefaults

/// The second "machine" of `defaults-demo cloud`: the demo re-executed as
/// `defaults-demo cloud-machine ADDRESS STATE_DIRECTORY`, with its own `CloudKeyValueStore`.
///
/// It talks to the first machine in lines: it prints `ready` once synced, `arrived KEY TIME` when a change
/// from elsewhere reaches its store, and `wrote KEY TIME` just before it writes; it reads
/// `write KEY VALUE` commands on standard input and exits at end of input. Times are seconds since 1970
/// (both processes read the same clock).
enum CloudMachine {
    static func run(address: String, state: URL) -> Int32 {
        let store: CloudKeyValueStore
        do {
            var configuration = try EtcdConfiguration(url: address)
            configuration.stateDirectory = state
            store = try CloudKeyValueStore(etcd: configuration)
        } catch {
            say("error cannot open the cloud store: \(error)")
            return 1
        }
        let observation = store.observe { change in
            let time = Date().timeIntervalSince1970
            for key in change.keys.sorted() { say("arrived \(key) \(time) \(change.reason)") }
        }
        guard store.synchronize() else {
            say("error the etcd node did not answer")
            return 1
        }
        say("ready")
        while let line = readLine() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts[0] == "write" else { continue }
            say("wrote \(parts[1]) \(Date().timeIntervalSince1970)")
            store.set(parts[2], forKey: parts[1])
            if !store.synchronize() { say("error the write of \(parts[1]) did not reach the server") }
        }
        observation.cancel()
        return 0
    }
}
