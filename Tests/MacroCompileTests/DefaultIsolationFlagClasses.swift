// `defaultIsolationIsMainActor: true` must compile wherever the Apple library's expansion does: with and
// without `@MainActor` on the class, with generated and custom initializers, in a module whose default
// isolation is not the main actor (here, Swift 6; `MacroCompileSwift5Tests`, Swift 5 language mode) and in
// one whose default isolation is the main actor (`DefaultIsolationMacroTests`). Those targets and
// `ObservableDefaultsMacroTests` compile this very file through a symbolic link; compiling them
// (`swift build --build-tests`) is the test, and `DefaultIsolationFlagTests.swift` (beside the Swift 5
// copy, linked into the others) runs the classes.
import Dispatch
import Foundation
import ObservableDefaults
import Synchronization

/// The main queue, recognised by a queue-specific value (under swift-testing on Linux the main queue is
/// drained by a thread Foundation does not call the main thread).
let flagMainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Whether the caller runs on the main queue.
func flagIsOnMainQueue() -> Bool { DispatchQueue.getSpecific(key: flagMainQueueKey) == true }

/// Records, for each `didSet`, whether it ran on the main queue (read from any thread).
final class FlagQueueLog: Sendable {
    private let state = Mutex<[Bool]>([])
    var entries: [Bool] { state.withLock { $0 } }
    func append(_ onMainQueue: Bool) { state.withLock { $0.append(onMainQueue) } }
}

// MARK: - @ObservableDefaults

@ObservableDefaults(defaultIsolationIsMainActor: true)
final class FlagDefaults {
    var count: Int = 0 {
        didSet { log.append(flagIsOnMainQueue()) }
    }
    var name = "n"
    @ObservableOnly var transient = false
    @Ignore let log = FlagQueueLog()
}

@MainActor
@ObservableDefaults(defaultIsolationIsMainActor: true)
final class FlagMainActorDefaults {
    var count: Int = 0 {
        didSet { log.append(flagIsOnMainQueue()) }
    }
    var name = "n"
    @ObservableOnly var transient = false
    @Ignore let log = FlagQueueLog()
}

@ObservableDefaults(autoInit: false, prefix: "custom.", defaultIsolationIsMainActor: true)
final class FlagDefaultsCustomInit {
    var count = 0

    init(suite: DefaultsSuite) {
        _userDefaults = suite
        observerStarter()
    }
}

@MainActor
@ObservableDefaults(autoInit: false, observeFirst: true, defaultIsolationIsMainActor: true)
final class FlagMainActorDefaultsCustomInit {
    @DefaultsBacked var count = 0
    var transient = 1

    init(suite: DefaultsSuite) {
        _userDefaults = suite
        observerStarter()
    }
}

@ObservableDefaults(defaultIsolationIsMainActor: true)
final class FlagSendableDefaults: Sendable {
    var count = 0
}

// MARK: - @ObservableCloud

@ObservableCloud(defaultIsolationIsMainActor: true)
final class FlagCloud {
    var count: Int = 0 {
        didSet { log.append(flagIsOnMainQueue()) }
    }
    var name = "n"
    @ObservableOnly var transient = false
    @Ignore let log = FlagQueueLog()
}

@MainActor
@ObservableCloud(defaultIsolationIsMainActor: true)
final class FlagMainActorCloud {
    var count: Int = 0 {
        didSet { log.append(flagIsOnMainQueue()) }
    }
    var name = "n"
    @ObservableOnly var transient = false
    @Ignore let log = FlagQueueLog()
}

@ObservableCloud(autoInit: false, defaultIsolationIsMainActor: true)
final class FlagCloudCustomInit {
    var count = 0

    init(prefix: String) {
        _prefix = prefix
        _developmentMode = true
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

@MainActor
@ObservableCloud(autoInit: false, observeFirst: true, developmentMode: true, defaultIsolationIsMainActor: true)
final class FlagMainActorCloudCustomInit {
    @CloudBacked var count = 0
    var transient = 1

    init(prefix: String) {
        _prefix = prefix
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

// The store each object uses (in development mode, one of its own), for the tests: an extension in the
// class's file sees the generated private `_cloudStore`.
extension FlagCloud {
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

extension FlagMainActorCloud {
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

extension FlagCloudCustomInit {
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

extension FlagMainActorCloudCustomInit {
    var storeInUse: CloudKeyValueStore { _cloudStore }
}

@ObservableCloud(defaultIsolationIsMainActor: true)
final class FlagSendableCloud: Sendable {
    var count = 0
}

// MARK: - Uses

/// The classes without `@MainActor` are created and used from whatever isolation the caller has.
func useFlagClasses(suite: DefaultsSuite, prefix: String) -> Int {
    let defaults = FlagDefaults(userDefaults: suite, prefix: prefix)
    defaults.count += 1
    let custom = FlagDefaultsCustomInit(suite: suite)
    custom.count += 1
    let sendable = FlagSendableDefaults(userDefaults: suite, prefix: prefix + "sendable.")
    sendable.count += 1
    let cloud = FlagCloud(prefix: prefix, developmentMode: true)
    cloud.count += 1
    let customCloud = FlagCloudCustomInit(prefix: prefix + "custom.")
    customCloud.count += 1
    let sendableCloud = FlagSendableCloud(prefix: prefix + "sendable.", developmentMode: true)
    sendableCloud.count += 1
    return defaults.count + custom.count + sendable.count + cloud.count + customCloud.count + sendableCloud.count
}

/// The `@MainActor` classes, on the main actor.
@MainActor
func useMainActorFlagClasses(suite: DefaultsSuite, prefix: String) -> Int {
    let defaults = FlagMainActorDefaults(userDefaults: suite, prefix: prefix)
    defaults.count += 1
    let custom = FlagMainActorDefaultsCustomInit(suite: suite)
    custom.count += custom.transient
    let cloud = FlagMainActorCloud(prefix: prefix, developmentMode: true)
    cloud.count += 1
    let customCloud = FlagMainActorCloudCustomInit(prefix: prefix + "custom.")
    customCloud.count += customCloud.transient
    return defaults.count + custom.count + cloud.count + customCloud.count
}
