import Foundation
import Observation
import ObservableDefaults
import Synchronization

/// Where one side of the cloud group works: the etcd member, the namespace its key lives in, and a state
/// directory of its own (each process's local copy; unused by the floor).
struct CloudPlace: Sendable {
    var endpoint: URL
    var namespace: String
    var stateDirectory: URL
}

/// The writing end of a cloud subject, in process A: writes one stamp (an integer) so that it travels
/// through etcd to the observers.
protocol CloudStampWriter: AnyObject {
    func write(stamp: Int) throws
    /// Returns once the server answered the last write (true), or at `deadline` in monotonic nanoseconds
    /// (false). The harness calls it after the observers reported the write, untimed, so that every sample
    /// starts with nothing in flight: a raw writer's `write(stamp:)` returns with the answer already, a
    /// store's at once.
    func waitForAnswer(deadline: Int) -> Bool
}

extension CloudStampWriter {
    /// A writer whose `write(stamp:)` returns with the server's answer has nothing to wait for.
    func waitForAnswer(deadline: Int) -> Bool { true }
}

extension CloudKeyValueStore {
    /// Polls ``CloudKeyValueStore/hasPendingChanges`` until the server confirmed every write (true), or
    /// `deadline` (false).
    func waitForAnswer(deadline: Int) -> Bool {
        while hasPendingChanges {
            if monotonicNanoseconds() >= deadline { return false }
            sleepNanoseconds(50_000)
        }
        return true
    }
}

/// One way of carrying a stamp from a writer in process A to observers in other processes through etcd.
///
/// The harness (``CloudBenchmarks``) takes the stamp from the monotonic clock just before
/// ``CloudStampWriter/write(stamp:)`` and each observer process reads the clock in `arrive`; the difference
/// is the sample. To measure another pair of write and observation, add a conforming type here (and to
/// ``CloudSubjects/named(_:)``): the harness, the child mode and the rows stay as they are.
protocol CloudSubject {
    /// The child mode's name for it (`defaults-bench --child cloud-observer ID …`).
    static var id: String { get }
    /// What is written and what is observed, as the report shows it.
    static var name: String { get }
    /// Process A: prepares a writer (synchronised with the server when it returns).
    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter
    /// An observer process: starts observing and returns once every later write will be seen, calling
    /// `arrive` with each stamp that reaches the observer (on any thread). The result keeps it alive.
    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject
}

/// The subjects of the cloud group.
enum CloudSubjects {
    /// No library code: a raw put → the raw watch event.
    static var floor: any CloudSubject.Type { RawEtcdSubject.self }
    /// No library code, but the library's kind of upload: a raw compare-and-swap txn → the raw watch event.
    static var swapFloor: any CloudSubject.Type { RawEtcdSwapSubject.self }
    /// The compare-and-swap floor with what every syncing store also does at the writing end: watch the
    /// namespace, so the writer receives (and parses) the event of its own write too.
    static var watchedSwapFloor: any CloudSubject.Type { RawEtcdWatchedSwapSubject.self }
    /// ``watchedSwapFloor`` over etcd's native protocol, the library's default transport: the floor the
    /// library's propagation target is measured against.
    static var grpcWatchedSwapFloor: any CloudSubject.Type { RawGRPCWatchedSwapSubject.self }
    /// The library as an app uses it, measured against the floor (propagation and fan-out rows, targets).
    static var library: any CloudSubject.Type { CloudMacroSubject.self }
    /// The library's store alone (extra propagation rows, to tell the macro's share from the store's).
    static var store: any CloudSubject.Type { CloudStoreSubject.self }
    /// The library over the JSON gateway, the transport before issue 31 (beside ``watchedSwapFloor``).
    static var gatewayLibrary: any CloudSubject.Type { CloudGatewayMacroSubject.self }

    static func named(_ id: String) -> (any CloudSubject.Type)? {
        [floor, swapFloor, watchedSwapFloor, grpcWatchedSwapFloor, library, store, gatewayLibrary].first {
            $0.id == id
        }
    }
}

/// A raw watch of the floors (over the gateway or gRPC), stopped by whoever holds it.
protocol RawStampWatch: Sendable {
    func stop()
}

/// A raw compare-and-swap writer of the floors (over the gateway or gRPC).
protocol RawStampSwapper: AnyObject {
    func swap(_ value: Int) throws
}

extension EtcdRawWatch: RawStampWatch {}
extension EtcdGRPCRawWatch: RawStampWatch {}
extension EtcdRawSwapper: RawStampSwapper {}
extension EtcdGRPCRawSwapper: RawStampSwapper {}

/// An observer process's raw watch, stopped when the observer goes.
final class RawWatchHolder {
    let watch: any RawStampWatch
    init(_ watch: any RawStampWatch) { self.watch = watch }
    deinit { watch.stop() }
}

/// A floor's writer that swaps and also watches its own key (reading its own events, as a store's watch does).
final class RawWatchedSwapWriter: CloudStampWriter {
    let swapper: any RawStampSwapper
    let ownWatch: any RawStampWatch
    init(_ swapper: any RawStampSwapper, _ ownWatch: any RawStampWatch) {
        self.swapper = swapper
        self.ownWatch = ownWatch
    }
    deinit { ownWatch.stop() }
    func write(stamp: Int) throws { try swapper.swap(stamp) }
}

/// The floor: `POST /v3/kv/put` over a kept-alive plain socket in A → the event read from a `/v3/watch`
/// stream on a plain socket in B.
enum RawEtcdSubject: CloudSubject {
    static let id = "raw"
    static let name = "raw put → raw watch event (plain sockets, no library code)"

    private final class Writer: CloudStampWriter {
        let putter: EtcdRawPutter
        init(_ putter: EtcdRawPutter) { self.putter = putter }
        func write(stamp: Int) throws { try putter.put(stamp) }
    }

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        let putter = EtcdRawPutter(endpoint: place.endpoint, key: place.namespace + "/stamp")
        try putter.put(0)  // connects, and the key exists before anyone measures
        return Writer(putter)
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        RawWatchHolder(try EtcdRawWatch(endpoint: place.endpoint, key: place.namespace + "/stamp", onValue: arrive))
    }
}

/// The floor of the library's kind of upload: `POST /v3/kv/txn` (compare the key's modification revision,
/// then put; else read it — the body the library sends) over a kept-alive plain socket in A → the event
/// read from a raw `/v3/watch` stream in B (``RawEtcdSubject``'s observer).
enum RawEtcdSwapSubject: CloudSubject {
    static let id = "raw-txn"
    static let name = "raw compare-and-swap txn → raw watch event (plain sockets, no library code)"

    private final class Writer: CloudStampWriter {
        let swapper: EtcdRawSwapper
        init(_ swapper: EtcdRawSwapper) { self.swapper = swapper }
        func write(stamp: Int) throws { try swapper.swap(stamp) }
    }

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        Writer(try primedSwapper(place))
    }

    /// A swapper of the stamp key, connected, with the key existing before anyone measures (a refusal —
    /// the key was there — taught it the revision).
    static func primedSwapper(_ place: CloudPlace) throws -> EtcdRawSwapper {
        let swapper = EtcdRawSwapper(endpoint: place.endpoint, key: place.namespace + "/stamp")
        do { try swapper.swap(0) } catch { try swapper.swap(0) }
        return swapper
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        try RawEtcdSubject.observe(place, arrive: arrive)
    }
}

/// ``RawEtcdSwapSubject`` with the writer also watching the key on a raw `/v3/watch` stream of its own (and
/// reading its own events, as a store's watch does), still no library code.
enum RawEtcdWatchedSwapSubject: CloudSubject {
    static let id = "raw-txn-watched"
    static let name =
        "raw compare-and-swap txn, the writer also watching → raw watch event (plain sockets, no library code)"

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        let swapper = try RawEtcdSwapSubject.primedSwapper(place)
        let ownWatch = try EtcdRawWatch(endpoint: place.endpoint, key: place.namespace + "/stamp") { _ in }
        return RawWatchedSwapWriter(swapper, ownWatch)
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        try RawEtcdSubject.observe(place, arrive: arrive)
    }
}

/// ``RawEtcdWatchedSwapSubject`` over gRPC (HTTP/2 with prior knowledge, by hand, no library code): a `KV/Txn`
/// compare-and-swap in A, which also watches the key on a Watch stream of its own connection → the event read
/// from a Watch stream in B.
enum RawGRPCWatchedSwapSubject: CloudSubject {
    static let id = "raw-grpc-txn-watched"
    static let name =
        "raw gRPC compare-and-swap txn, the writer also watching → raw gRPC watch event (plain sockets, no library code)"

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        let key = place.namespace + "/stamp"
        let swapper = try EtcdGRPCRawSwapper(endpoint: place.endpoint, key: key)
        try swapper.swap(0)  // connects, and the key exists before anyone measures
        let ownWatch = try EtcdGRPCRawWatch(endpoint: place.endpoint, key: key) { _ in }
        return RawWatchedSwapWriter(swapper, ownWatch)
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        RawWatchHolder(try EtcdGRPCRawWatch(endpoint: place.endpoint, key: place.namespace + "/stamp", onValue: arrive))
    }
}

/// The library as an app uses it: an `@ObservableCloud` property write in A (``CloudStampSettings``) →
/// that property's `withObservationTracking` `onChange` in B, re-armed after each change; each process
/// with its own `CloudKeyValueStore(etcd:)` and local copy.
enum CloudMacroSubject: CloudSubject {
    static let id = "macro"
    static let name = "`@ObservableCloud` property write → its `withObservationTracking` `onChange`"

    private final class Writer: CloudStampWriter {
        let settings: CloudStampSettings
        let store: CloudKeyValueStore
        init(_ settings: CloudStampSettings, on store: CloudKeyValueStore) {
            self.settings = settings
            self.store = store
        }
        func write(stamp: Int) throws { settings.stamp = stamp }
        func waitForAnswer(deadline: Int) -> Bool { store.waitForAnswer(deadline: deadline) }
    }

    /// Tracks `stamp`: `onChange` reads the clock and the new value (the copy changes before Observation
    /// hears of it), then re-arms the tracking right there, on the thread that delivered the change; a
    /// hop to a queue would wake a second thread per change, the observer's cost rather than the
    /// library's (about a fifth of the observing process's CPU per change). A change that lands before the
    /// re-arm is reported by the re-arm itself (later, so it counts as slow, never as lost).
    private final class Observer: Sendable {
        let settings: CloudStampSettings
        let arrive: @Sendable (Int) -> Void
        private let reported = Mutex(0)

        init(_ settings: CloudStampSettings, arrive: @escaping @Sendable (Int) -> Void) {
            self.settings = settings
            self.arrive = arrive
        }

        func arm() {
            let current = withObservationTracking {
                settings.stamp
            } onChange: { [self] in
                report(settings.stamp)
                arm()
            }
            report(current)
        }

        private func report(_ stamp: Int) {
            let isNew = reported.withLock { last in
                defer { last = max(last, stamp) }
                return stamp > last
            }
            if isNew { arrive(stamp) }
        }
    }

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter { try writer(place, over: nil) }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        try observe(place, over: nil, arrive: arrive)
    }

    /// The writer, its store talking to etcd over `transport` (`nil`: the library's default).
    static func writer(_ place: CloudPlace, over transport: EtcdConfiguration.Transport?) throws
        -> any CloudStampWriter
    {
        let store = try CloudStoreSubject.open(place, over: transport)
        return Writer(CloudStampSettings(store: store), on: store)
    }

    /// The observer, its store talking to etcd over `transport` (`nil`: the library's default).
    static func observe(
        _ place: CloudPlace, over transport: EtcdConfiguration.Transport?, arrive: @escaping @Sendable (Int) -> Void
    ) throws -> AnyObject {
        let observer = Observer(
            CloudStampSettings(store: try CloudStoreSubject.open(place, over: transport)), arrive: arrive)
        observer.arm()
        return observer
    }
}

/// ``CloudMacroSubject`` with both stores on etcd's JSON gateway (`?transport=gateway`), the transport before
/// issue 31: how the library did against ``RawEtcdWatchedSwapSubject`` then, measured beside how it does
/// against ``RawGRPCWatchedSwapSubject`` now.
enum CloudGatewayMacroSubject: CloudSubject {
    static let id = "macro-gateway"
    static let name = CloudMacroSubject.name + ", both stores over the JSON gateway"

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        try CloudMacroSubject.writer(place, over: .gateway)
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        try CloudMacroSubject.observe(place, over: .gateway, arrive: arrive)
    }
}

/// The library's store alone: `CloudKeyValueStore.set` in A → the `observe(keys:)` callback in B, each process
/// with its own `CloudKeyValueStore(etcd:)` and local copy.
enum CloudStoreSubject: CloudSubject {
    static let id = "store"
    static let name = "`CloudKeyValueStore.set` → `observe(keys:)` callback"

    private final class Writer: CloudStampWriter {
        let store: CloudKeyValueStore
        init(_ store: CloudKeyValueStore) { self.store = store }
        func write(stamp: Int) throws { store.set(Int64(stamp), forKey: "stamp") }
        func waitForAnswer(deadline: Int) -> Bool { store.waitForAnswer(deadline: deadline) }
    }

    private final class Observer {
        let store: CloudKeyValueStore
        var observation: DefaultsObservation?
        init(_ store: CloudKeyValueStore) { self.store = store }
        deinit { observation?.cancel() }
    }

    static func writer(_ place: CloudPlace) throws -> any CloudStampWriter {
        Writer(try open(place))
    }

    static func observe(_ place: CloudPlace, arrive: @escaping @Sendable (Int) -> Void) throws -> AnyObject {
        let observer = Observer(try open(place))
        let store = observer.store
        observer.observation = store.observe(keys: ["stamp"]) { _ in arrive(Int(store.longLong(forKey: "stamp"))) }
        return observer
    }

    /// A store on `place` talking to etcd over `transport` (`nil`: the library's default), synchronised with
    /// the server.
    static func open(_ place: CloudPlace, over transport: EtcdConfiguration.Transport? = nil) throws
        -> CloudKeyValueStore
    {
        var configuration = EtcdConfiguration(
            endpoints: [place.endpoint], namespace: place.namespace, stateDirectory: place.stateDirectory)
        if let transport { configuration.transport = transport }
        let store = try CloudKeyValueStore(etcd: configuration)
        guard store.synchronize(timeout: 20) else {
            throw EtcdGatewayError(
                "the store of namespace \(place.namespace) did not sync with \(place.endpoint.absoluteString) within 20 s: "
                    + store.currentErrors.map(\.description).joined(separator: "; "))
        }
        return store
    }
}
