import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A custom initializer that writes, then changes the prefix (and tries the store: fixed by the first
/// write), then writes again, then starts observing.
@ObservableCloud(autoInit: false)
final class CloudReconfiguredInInit {
    var first = 0
    var second = 0

    init(store: CloudKeyValueStore, then other: CloudKeyValueStore, prefix: String) {
        _cloudStore = store
        self.first = 1
        _cloudStore = other
        _prefix = prefix
        self.second = 2
        _cloudObserver = CloudObservation(host: self, prefix: _prefix)
    }
}

/// The cloud setter reads the binding's configuration without a lock, from a published immutable snapshot
/// (`_PublishedConfiguration`, as the defaults family): each change of the configuration must withdraw it,
/// or writes would keep going to the old key or skip the wrong observer.
@Suite struct CloudWriteConfigurationTests {
    let directory = TemporaryDirectory()

    @Test func aWriteAfterThePrefixChangesGoesToTheNewKeyInTheFirstStore() {
        let store = CloudKeyValueStore.localOnly(directory: directory.file("a"))
        let other = CloudKeyValueStore.localOnly(directory: directory.file("b"))
        let model = CloudReconfiguredInInit(store: store, then: other, prefix: "p_")
        #expect(store.value(forKey: "first") == .integer(1))
        #expect(store.value(forKey: "p_second") == .integer(2))
        #expect(store.value(forKey: "second") == nil)
        #expect(other.value(forKey: "p_second") == nil && other.value(forKey: "first") == nil)
        model.second = 3
        #expect(store.value(forKey: "p_second") == .integer(3))
        #expect(model.second == 3)
    }

    @Test func eachChangeIsPublishedToTheSetter() {
        let store = CloudKeyValueStore.localOnly(directory: directory.file("a"))
        let binding = _CloudObjectBinding(prefix: "", syncImmediately: false, developmentMode: false, mainActor: false)
        binding.configure(store: store)
        let first = binding.currentWriteConfiguration
        #expect(first.store === store && first.prefix == "" && first.observer == nil && !first.syncImmediately)
        #expect(binding.currentWriteConfiguration === first)  // published once, then read as it is

        binding.configure(prefix: "x_", syncImmediately: true)
        let second = binding.currentWriteConfiguration
        #expect(second.store === store && second.prefix == "x_" && second.syncImmediately)

        let properties = _CloudPropertyList()  // two properties on one key, so that start registers the observer
        for _ in 0..<2 {
            properties.append(
                _CloudPropertyBinding(
                    key: "k", keyPath: \String.count, slot: binding, load: { _, _ in }, apply: { _, _ in }))
        }
        let observation = binding.start(properties)
        let started = binding.currentWriteConfiguration
        let token = binding.state.withLock { $0.observerToken }
        #expect(token != nil && started.observer == token)  // the object's own writes skip its observer
        #expect(started.sharedKeys == ["x_k"])  // unless another property shares the key
        #expect(binding.cloudWriteTarget(for: "k").skippedObserver == nil)
        observation?.cancel()
    }
}
