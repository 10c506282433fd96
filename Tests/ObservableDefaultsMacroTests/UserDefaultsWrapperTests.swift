@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

// `UserDefaultsWrapper<Value>.getValue(_:_:_:)` / `setValue(_:_:_:)`, the Apple library's public helpers: each
// storage rule of the macros, checked against an object's property on the same suite.

enum WrapperTheme: String, Codable {
    case light, dark
}

struct WrapperEndpoint: Codable, Equatable {
    var host: String
    var port: Int
}

/// A Codable value whose encoding always fails.
struct WrapperUnencodable: Codable, Equatable {
    struct Refused: Error {}
    func encode(to encoder: any Encoder) throws { throw Refused() }
}

@ObservableDefaults
final class WrapperSettings {
    var theme: WrapperTheme = .light
    var endpoint = WrapperEndpoint(host: "localhost", port: 80)
    var limit: Double? = 2.5
    var tags: [String] = []
}

@Suite struct UserDefaultsWrapperTests {
    @Test func eachStorageRuleReadsAndWritesWhatAPropertyDoes() async throws {
        let suite = try makeSuite()
        let settings = WrapperSettings(userDefaults: suite)

        UserDefaultsWrapper<WrapperTheme>.setValue("theme", .dark, suite)
        #expect(suite.value(forKey: "theme") == .string("dark"))  // the raw value, as the property stores it
        #expect(UserDefaultsWrapper<WrapperTheme>.getValue("theme", .light, suite) == .dark)

        settings.endpoint = WrapperEndpoint(host: "db", port: 5432)
        #expect(
            UserDefaultsWrapper<WrapperEndpoint>.getValue("endpoint", WrapperEndpoint(host: "x", port: 1), suite)
                == WrapperEndpoint(host: "db", port: 5432))
        UserDefaultsWrapper<WrapperEndpoint>.setValue("endpoint", WrapperEndpoint(host: "cache", port: 6379), suite)
        #expect(suite.value(forKey: "endpoint") == .dictionary(["host": .string("cache"), "port": .integer(6379)]))

        UserDefaultsWrapper<[String]>.setValue("tags", ["a", "b"], suite)
        #expect(UserDefaultsWrapper<[String]>.getValue("tags", [], suite) == ["a", "b"])

        // Spelled as the Apple library's generated code spells it, with `Value` inferred.
        let key = "tags", theme: WrapperTheme = .light, limit: Double? = nil
        UserDefaultsWrapper.setValue(key, ["c"], suite)
        #expect(UserDefaultsWrapper.getValue(key, [String](), suite) == ["c"])
        #expect(UserDefaultsWrapper.getValue("theme", theme, suite) == .dark)
        let readLimit: Double? = UserDefaultsWrapper.getValue("limit", limit, suite)
        #expect(readLimit == nil)
        UserDefaultsWrapper.setValue("tags", ["a", "b"], suite)

        // The object hears the writes as changes made in this process.
        #expect(
            await eventually {
                settings.theme == .dark && settings.endpoint.host == "cache" && settings.tags == ["a", "b"]
            })
    }

    @Test func optionalsTakeNilAsARemovalAndReadTheirDefaultWhenAbsent() throws {
        let suite = try makeSuite()
        UserDefaultsWrapper<Double>.setValue("limit", Double?.some(4), suite)
        #expect(UserDefaultsWrapper<Double>.getValue("limit", Double?.none, suite) == 4)
        UserDefaultsWrapper<Double>.setValue("limit", Double?.none, suite)
        #expect(suite.value(forKey: "limit") == nil)
        #expect(UserDefaultsWrapper<Double>.getValue("limit", Double?.some(2.5), suite) == 2.5)
        #expect(UserDefaultsWrapper<WrapperTheme>.getValue("absent", WrapperTheme?.none, suite) == nil)
    }

    @Test func aValueThatDoesNotFitReadsAsTheDefaultAndRegisteredDefaultsCount() throws {
        let suite = try makeSuite()
        suite.set("many", forKey: "count")
        #expect(UserDefaultsWrapper<Int>.getValue("count", 3, suite) == 3)
        suite.set("purple", forKey: "theme")
        #expect(UserDefaultsWrapper<WrapperTheme>.getValue("theme", .light, suite) == .light)
        suite.register(defaults: ["registered": .integer(9)])
        #expect(UserDefaultsWrapper<Int>.getValue("registered", 1, suite) == 9)
    }

    @Test func aValueThatCannotBeEncodedIsReportedAndNothingIsWritten() throws {
        let suite = try makeSuite()
        let errors = Locked<[DefaultsError]>([])
        let observation = suite.observeErrors { error in errors.withLock { $0.append(error) } }
        defer { observation.cancel() }
        suite.set("kept", forKey: "odd")
        UserDefaultsWrapper<WrapperUnencodable>.setValue("odd", WrapperUnencodable(), suite)
        #expect(suite.value(forKey: "odd") == .string("kept"))
        let reported = errors.withLock { $0 }
        #expect(reported.count == 1)
        #expect(reported.first?.kind == .unsupportedValue && reported.first?.key == "odd")
        #expect(reported.first?.message.contains("WrapperUnencodable") == true)
    }
}
