@testable import ObservableDefaults
import Foundation
import Testing

// Code written for the Apple library, compiled unchanged (item by item of what a port hits).

struct PortedProfile: CodableUserDefaultsPropertyListValue, Equatable {
    var name = "p"
}

/// Chooses its suite in a custom initializer, as the Apple library's README shows (`_userDefaults = …`).
@ObservableDefaults(autoInit: false, suiteName: "", prefix: " port_ ")
final class PortedSettings {
    var text = NSString(string: "t")
    var number = NSNumber(value: 3)
    var flag = NSNumber(value: true)
    var data = NSData(data: Data([1, 2]))
    var date = NSDate(timeIntervalSinceReferenceDate: 10)
    var url = NSURL(string: "https://example.org/a")!
    var optionalText: NSString? = nil
    var profile = PortedProfile()
    @DefaultsKey var plainKey = 1

    init(suite: DefaultsSuite, quiet: Bool = false) {
        _userDefaults = suite
        _isExternalNotificationDisabled = quiet
        observerStarter()
    }

    var configuration: (suite: DefaultsSuite, prefix: String, quiet: Bool) {
        (_userDefaults, _prefix, _isExternalNotificationDisabled)
    }
}

/// `suiteName: " "` is the standard suite.
@ObservableDefaults(suiteName: " ", prefix: "std_")
final class BlankSuiteName {
    var value = 0
}

func requiresPropertyListValue<T: UserDefaultsPropertyListValue>(_ value: T) -> T { value }

@Suite struct PortingTests {
    @Test func customInitializerChoosesTheSuiteAndFoundationObjectsAreStored() async throws {
        let suite = try makeSuite()
        suite.set(.string("stored"), forKey: "port_text")
        let model = PortedSettings(suite: suite)
        #expect(model.configuration.suite === suite)
        #expect(model.configuration.prefix == "port_")
        #expect(model.text == "stored")
        model.number = NSNumber(value: 42)
        model.flag = NSNumber(value: false)
        model.data = NSData(data: Data([9]))
        model.date = NSDate(timeIntervalSinceReferenceDate: 20)
        model.url = NSURL(string: "https://example.org/b")!
        model.optionalText = "o"
        model.profile = PortedProfile(name: "q")
        model.plainKey = 2
        #expect(suite.value(forKey: "port_number") == .integer(42))
        #expect(suite.value(forKey: "port_flag") == .bool(false))
        #expect(suite.value(Data.self, forKey: "port_data") == Data([9]))
        #expect(suite.value(Date.self, forKey: "port_date") == Date(timeIntervalSinceReferenceDate: 20))
        #expect(suite.value(forKey: "port_url") == .string("https://example.org/b"))
        #expect(suite.value(forKey: "port_optionalText") == .string("o"))
        #expect(suite.value(forKey: "port_profile") == .dictionary(["name": .string("q")]))
        #expect(suite.value(forKey: "port_plainKey") == .integer(2))
        let fresh = PortedSettings(suite: suite, quiet: true)
        #expect(fresh.configuration.quiet)
        #expect(fresh.number == NSNumber(value: 42))
        #expect(fresh.flag == NSNumber(value: false))
        #expect(fresh.data == NSData(data: Data([9])))
        #expect(fresh.date == NSDate(timeIntervalSinceReferenceDate: 20))
        #expect(fresh.url == NSURL(string: "https://example.org/b")!)
        #expect(fresh.optionalText == "o")
        model.optionalText = nil
        #expect(suite.value(forKey: "port_optionalText") == nil)
        #expect(requiresPropertyListValue(["a": [1, 2]]) == ["a": [1, 2]])
    }

    @Test func blankSuiteNameIsTheStandardSuite() {
        let model = BlankSuiteName()
        model.value = Int.random(in: 1...1_000_000)
        #expect(DefaultsSuite.standard.value(forKey: "std_value") == .integer(model.value))
    }
}

/// The Apple library's `Nullable` wrapper for an optional `Codable` value.
@ObservableDefaults(prefix: "n_")
final class NullableSettings {
    var user: Nullable<PortedProfile> = Nullable.none
    var other: Nullable<PortedProfile> = nil
}

@Suite struct NullableTests {
    @Test func nullableIsStoredLikeAnOptional() throws {
        let suite = try makeSuite()
        let model = NullableSettings(userDefaults: suite)
        #expect(!model.user.hasValue)
        model.user = Nullable.from(value: PortedProfile(name: "u"))
        #expect(suite.value(forKey: "n_user") == .dictionary(["name": .string("u")]))
        #expect(NullableSettings(userDefaults: suite).user.value == PortedProfile(name: "u"))
        #expect(model.user.map { $0.name.count }.valueOrDefault(0) == 1)
        model.user = .none
        #expect(suite.value(forKey: "n_user") == nil)
        #expect(NullableSettings(userDefaults: suite).user == .none)
        #expect(model.other.description == "Nullable.none")
    }
}
