import Foundation
import ObservableDefaults

/// The second "machine" of `defaults-demo cloud`: the demo re-executed as
/// `defaults-demo cloud-machine ADDRESS STATE_DIRECTORY`, with a ``CloudDemoSettings`` object on its own
/// `CloudKeyValueStore`.
///
/// It talks to the first machine in lines: `ready` once synced and observing; `changed PROPERTY TIME VALUE`
/// when a property's observer is called (VALUE as the property holds it then: the new value for a change
/// from elsewhere); `wrote PROPERTY TIME` just before it assigns a property. It reads `write PROPERTY VALUE`
/// (assign), `counts` (answers `counts greeting=N volume=N theme=N`, the observer calls so far) and exits at
/// end of input. Times are seconds since 1970 (both processes read the same clock).
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
        guard store.synchronize() else {
            say("error the etcd node did not answer")
            return 1
        }
        let settings = CloudDemoSettings(store: store)
        let log = ArrivalLog()
        settings.trackEachProperty { property, time in
            log.record(Arrival(property: property, time: time))
            say("changed \(property) \(time.timeIntervalSince1970) \(settings.describe(property))")
        }
        say("ready")
        while let line = readLine() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            switch (parts.first, parts.count) {
            case ("write", 3):
                say("wrote \(parts[1]) \(Date().timeIntervalSince1970)")
                settings.set(parts[1], to: parts[2])
            case ("counts", 1):
                let counts = log.counts()
                say(
                    "counts "
                        + CloudDemoSettings.properties.map { "\($0.name)=\(counts[$0.name, default: 0])" }.joined(
                            separator: " "))
            default:
                say("error unknown command: \(line)")
            }
        }
        return 0
    }
}
