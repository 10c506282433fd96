@testable import ObservableDefaults
import Foundation
import Testing

/// A custom initializer that writes, then changes the suite and the prefix, then writes again.
@ObservableDefaults(autoInit: false)
final class ReconfiguredInInit {
    var first = 0
    var second = 0

    init(first suite: DefaultsSuite, then other: DefaultsSuite, prefix: String) {
        _userDefaults = suite
        self.first = 1
        _userDefaults = other
        _prefix = prefix
        self.second = 2
        observerStarter()
    }
}

/// The setter reads the binding's configuration without a lock, from a published immutable snapshot: each
/// change of the configuration must withdraw the snapshot, or writes would keep going to the old suite, key
/// or observer.
@Suite struct WriteConfigurationTests {
    @Test func aWriteAfterTheSuiteAndPrefixChangeGoesToTheNewOnes() throws {
        let suite = try makeSuite(), other = try makeSuite()
        let model = ReconfiguredInInit(first: suite, then: other, prefix: "p.")
        #expect(suite.storedValue(forKey: "first") == .integer(1))
        #expect(suite.storedValue(forKey: "second") == nil && suite.storedValue(forKey: "p.second") == nil)
        #expect(other.storedValue(forKey: "p.second") == .integer(2))
        #expect(other.storedValue(forKey: "second") == nil)
        model.second = 3
        #expect(other.storedValue(forKey: "p.second") == .integer(3))
    }

    @Test func eachChangeIsPublishedToTheSetter() throws {
        let suite = try makeSuite(), other = try makeSuite()
        let binding = _DefaultsObjectBinding(
            suiteName: nil, prefix: "", ignoreExternalChanges: false, limitToInstance: false, mainActor: false)
        binding.configure(suite: suite, ignoreExternalChanges: nil, prefix: nil)
        let first = binding.currentWriteConfiguration
        #expect(first.suite === suite && first.prefix == "" && first.observer == nil)
        #expect(binding.currentWriteConfiguration === first)  // published once, then read as it is

        binding.configure(suite: other, ignoreExternalChanges: nil, prefix: "x.")
        let second = binding.currentWriteConfiguration
        #expect(second.suite === other && second.prefix == "x.")

        let properties = _DefaultsPropertyList()  // one property, so that start registers the observer
        properties.append(
            _DefaultsPropertyBinding(
                key: "k", keyPath: \String.count, slot: binding, load: { _, _ in }, follow: { _, _ in },
                apply: { _, _ in }))
        binding.start(properties, ignoring: [])
        let started = binding.currentWriteConfiguration
        let token = binding.state.withLock { $0.observerToken }
        #expect(token != nil && started.observer == token)  // the object's own writes skip its observer
    }
}
