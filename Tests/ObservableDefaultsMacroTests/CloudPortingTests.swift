@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

// The Apple library's `@ObservableCloud` behaviours, with classes written as for that library, in
// development mode (each object keeps its values in a store of its own, as there). Tests of what the shared
// development store (`store: .development`) does use a prefix of their own. Where this library differs on
// purpose (README, "Coming from ObservableDefaults"), the test says so.

@ObservableCloud
final class PortedCloudModel {
    var name: String = "Test" {
        willSet { events.append("willSet: \(newValue)") }
        didSet { events.append("didSet: \(oldValue)") }
    }

    @ObservableOnly
    var observableOnly: String = "ObservableOnly" {
        willSet { events.append("willSet: \(newValue)") }
        didSet { events.append("didSet: \(oldValue)") }
    }

    @Ignore
    var ignored: String = "Ignore" {
        willSet { events.append("willSet: \(newValue)") }
        didSet { events.append("didSet: \(oldValue)") }
    }

    @Ignore
    let events = EventLog()
}

@ObservableCloud
final class PortedCloudOptionals {
    var name: String?
    var optionalName: String? = nil
    var optionalAge: Int? = 30
    var withoutInitializer: Double?
    @CloudKey(keyValueStoreKey: "cloud-custom-optional-key")
    var withCustomKey: Bool? = false
    var int64: Int64? = Int64.max
    var float: Float? = Float(3.14)
    var bool: Bool? = true
    var data: Data? = "CloudTest".data(using: .utf8)
    var date: Date? = Date(timeIntervalSince1970: 1_640_995_200)
}

struct PortedFontStyle: CodableCloudPropertyListValue, Hashable {
    let size: Double
    let id: Int
    static let style1 = PortedFontStyle(size: 20, id: 1)
    static let style2 = PortedFontStyle(size: 30, id: 2)
    static let style3 = PortedFontStyle(size: 40, id: 3)
}

@ObservableCloud
final class PortedCloudCodable {
    var style: PortedFontStyle = .style1
    var explicitStyle: PortedFontStyle = PortedFontStyle.style2
}

@ObservableCloud(observeFirst: true)
final class PortedCloudObserveFirst {
    @CloudBacked
    var name: String = "Test"
    var observableOnly: String = "ObservableOnly"
}

@ObservableCloud
final class PortedCloudKeyNames {
    @CloudBacked(keyValueStoreKey: "rename-by-backed-key")
    var renameByBackedKey: String = "Test"
    @CloudKey(keyValueStoreKey: "rename-by-defaults-key")
    var renameByDefaultsKey: String = "Test"
    // Both given: @CloudBacked's key wins, as in the Apple library.
    @CloudKey(keyValueStoreKey: "mix-key-defaults-key")
    @CloudBacked(keyValueStoreKey: "mix-key-backed-key")
    var mixKey: String = "Test"
}

@ObservableCloud(syncImmediately: true)
final class PortedCloudSyncImmediately {
    var name: String = "Test"
}

extension PortedCloudSyncImmediately {
    var syncsImmediately: Bool { _syncImmediately }
}

// The tests' access to the generated private `_cloudStore` (an extension in the class's file sees it).
extension PortedCloudModel {
    var store: CloudKeyValueStore { _cloudStore }
}

extension PortedCloudOptionals {
    var store: CloudKeyValueStore { _cloudStore }
}

extension PortedCloudObserveFirst {
    var store: CloudKeyValueStore { _cloudStore }
}

extension PortedCloudKeyNames {
    var store: CloudKeyValueStore { _cloudStore }
}

@MainActor
@ObservableCloud
final class PortedCloudMainActor {
    var name: String = "Test"
    var count: Int = 0
    @CloudKey(keyValueStoreKey: "main-actor-custom-key")
    var customKey: String = "CustomValue"
}

/// A prefix of its own for each use of the shared development store.
private func uniquePrefix() -> String { "port-\(UUID().uuidString.prefix(8))_" }

@Suite struct CloudPortingTests {
    @Test func aPersistedPropertyIsObservable() {
        let model = PortedCloudModel(developmentMode: true)
        #expect(model._developmentMode_)
        let flag = track { _ = model.name }
        model.name = "Test2"
        #expect(flag.count == 1)
        #expect(model.name == "Test2")
    }

    @Test func anIgnoredPropertyIsNotObservable() {
        let model = PortedCloudModel(developmentMode: true)
        let flag = track { _ = model.ignored }
        model.ignored = "Test2"
        #expect(!flag.fired)
    }

    @Test func assigningTheSameValueNotifiesNobody() {
        let model = PortedCloudModel(developmentMode: true)
        let name = track { _ = model.name }
        model.name = "Test"
        let observableOnly = track { _ = model.observableOnly }
        model.observableOnly = "ObservableOnly"
        #expect(!name.fired)
        #expect(!observableOnly.fired)
    }

    /// Deliberate difference: the Apple library does not run `willSet`/`didSet` of a cloud-backed property;
    /// here they run, as for `@DefaultsBacked` properties.
    @Test func observersRunForEveryKindOfProperty() {
        let model = PortedCloudModel(developmentMode: true)
        model.observableOnly = "test1"
        #expect(model.events.events == ["willSet: test1", "didSet: ObservableOnly"])
        model.ignored = "test2"
        #expect(model.events.events.suffix(2) == ["willSet: test2", "didSet: Ignore"])
        model.name = "test3"
        #expect(model.events.events.suffix(2) == ["willSet: test3", "didSet: Test"])
    }

    @Test func optionalsStartFromTheirDeclarationsAndTakeNil() {
        let model = PortedCloudOptionals(developmentMode: true)
        #expect(model.name == nil)
        #expect(model.optionalName == nil)
        #expect(model.optionalAge == 30)
        #expect(model.withoutInitializer == nil)
        #expect(model.withCustomKey == false)
        #expect(model.int64 == Int64.max)
        #expect(model.float == Float(3.14))
        #expect(model.bool == true)
        #expect(model.data == "CloudTest".data(using: .utf8))
        #expect(model.date == Date(timeIntervalSince1970: 1_640_995_200))

        let optionalName = track { _ = model.optionalName }
        model.optionalName = "CloudTestName"
        #expect(optionalName.count == 1)
        #expect(model.store.string(forKey: "optionalName") == "CloudTestName")

        // In development mode the object's values are its own: `nil` stays `nil`, as in the Apple library.
        let optionalAge = track { _ = model.optionalAge }
        model.optionalAge = nil
        #expect(model.optionalAge == nil && optionalAge.count == 1)
        #expect(model.store.value(forKey: "optionalAge") == nil)
        let again = track { _ = model.optionalAge }
        model.optionalAge = nil
        #expect(!again.fired)
        model.optionalAge = 30
        #expect(model.optionalAge == 30)
        model.int64 = nil
        model.float = nil
        model.bool = nil
        #expect(model.int64 == nil && model.float == nil && model.bool == nil)

        model.withoutInitializer = 2.718
        #expect(model.withoutInitializer == 2.718)
        model.withCustomKey = true
        #expect(model.store.bool(forKey: "cloud-custom-optional-key"))
        model.int64 = 12_345
        model.float = Float(2.718)
        model.bool = false
        model.data = "NewCloudTest".data(using: .utf8)
        model.date = Date(timeIntervalSince1970: 1_672_531_200)
        #expect(model.int64 == 12_345)
        #expect(model.float == Float(2.718))
        #expect(model.bool == false)
        #expect(model.data == "NewCloudTest".data(using: .utf8))
        #expect(model.date == Date(timeIntervalSince1970: 1_672_531_200))

        // A fresh object starts from its declarations again.
        let second = PortedCloudOptionals(developmentMode: true)
        #expect(second.optionalName == nil && second.optionalAge == 30 && second.int64 == Int64.max)
        #expect(second.date == Date(timeIntervalSince1970: 1_640_995_200))
    }

    /// Deliberate difference, on a store shared by several objects (not the Apple library's development
    /// mode): `nil` removes the key, and the property reads its declaration default, as a new object would.
    @Test func onASharedStoreNilRemovesTheKey() {
        let prefix = uniquePrefix()
        let model = PortedCloudOptionals(prefix: prefix, store: .development)
        model.optionalName = "Shared"
        model.optionalAge = nil
        #expect(model.optionalAge == 30)
        #expect(CloudKeyValueStore.development.value(forKey: prefix + "optionalAge") == nil)
        let second = PortedCloudOptionals(prefix: prefix, store: .development)
        #expect(second.optionalName == "Shared" && second.optionalAge == 30)
    }

    @Test func codableValuesWithStaticMembers() {
        let model = PortedCloudCodable(developmentMode: true)
        #expect(model.style == .style1)
        #expect(model.explicitStyle == .style2)
        let style = track { _ = model.style }
        model.style = .style3
        #expect(style.count == 1)
        #expect(model.style == .style3)
        model.explicitStyle = .style1
        #expect(model.explicitStyle == .style1)
        let custom = PortedFontStyle(size: 50, id: 4)
        model.style = custom
        #expect(model.style == custom)
    }

    @MainActor
    @Test func aMainActorClass() {
        let model = PortedCloudMainActor(developmentMode: true)
        #expect(model.name == "Test" && model.count == 0 && model.customKey == "CustomValue")
        let name = track { _ = model.name }
        model.name = "MainActorTest"
        let count = track { _ = model.count }
        model.count = 42
        model.customKey = "UpdatedValue"
        #expect(name.count == 1 && count.count == 1)
        #expect(model.name == "MainActorTest" && model.count == 42 && model.customKey == "UpdatedValue")
    }

    @Test func observeFirstStoresOnlyCloudBackedProperties() async throws {
        let model = PortedCloudObserveFirst(developmentMode: true)
        model.observableOnly = "Test2"
        model.name = "Test3"
        #expect(model.store.value(forKey: "observableOnly") == nil)
        #expect(model.store.string(forKey: "name") == "Test3")

        // A change of the observable-only property's name in the store is not the property's.
        let observableOnly = track { _ = model.observableOnly }
        try model.store.simulateExternalChange(["observableOnly": .string("outside"), "name": .string("Test4")])
        #expect(await eventually { model.name == "Test4" })
        #expect(model.observableOnly == "Test2")
        #expect(!observableOnly.fired)
    }

    @Test func keyNamesFollowCloudBackedThenCloudKey() {
        let model = PortedCloudKeyNames(developmentMode: true)
        model.renameByBackedKey = "Test2"
        model.renameByDefaultsKey = "Test3"
        model.mixKey = "Test4"
        #expect(model.store.string(forKey: "rename-by-backed-key") == "Test2")
        #expect(model.store.string(forKey: "rename-by-defaults-key") == "Test3")
        #expect(model.store.string(forKey: "mix-key-backed-key") == "Test4")
        #expect(model.store.value(forKey: "mix-key-defaults-key") == nil)
    }

    @Test func theMacrosSyncImmediatelyIsTheInitializersDefault() {
        #expect(PortedCloudSyncImmediately(developmentMode: true).syncsImmediately)
        #expect(!PortedCloudSyncImmediately(syncImmediately: false, developmentMode: true).syncsImmediately)
    }

    @Test func aChangeFromElsewhereUpdatesOnlyItsProperty() async throws {
        let model = PortedCloudModel(developmentMode: true)
        let name = track { _ = model.name }
        let observableOnly = track { _ = model.observableOnly }
        try model.store.simulateExternalChange(["name": .string("Test2")], reason: .serverChange)
        #expect(await eventually { model.name == "Test2" })
        #expect(name.count == 1)
        #expect(!observableOnly.fired)
    }

    @Test func theDeclarationDefaultNeverChanges() async throws {
        let model = PortedCloudModel(developmentMode: true)
        model.name = "Test2"
        try model.store.simulateExternalChange(["name": nil])
        #expect(await eventually { model.name == "Test" })
    }

    @Test func aReleasedModelIsDeallocatedAndAReplacementReadsTheStore() async throws {
        let prefix = uniquePrefix()
        weak var released: PortedCloudModel?
        do {
            let model = PortedCloudModel(prefix: prefix, store: .development)
            released = model
            #expect(model.name == "Test")
        }
        #expect(released == nil)
        try CloudKeyValueStore.development.simulateExternalChange([prefix + "name": .string("AfterRelease")])
        let replacement = PortedCloudModel(prefix: prefix, store: .development)
        #expect(replacement.name == "AfterRelease")
        let name = track { _ = replacement.name }
        try CloudKeyValueStore.development.simulateExternalChange([prefix + "name": .string("ReplacementUpdate")])
        #expect(await eventually { replacement.name == "ReplacementUpdate" })
        #expect(name.count == 1)
    }
}
