@testable import ObservableDefaults
import Foundation
import Testing

@Test func smoke() async throws {
    let suite = try makeSuite()
    let settings = Settings(userDefaults: suite)
    #expect(settings.host == "localhost")
    settings.host = "example.org"
    #expect(suite.value(forKey: "net_host") == .string("example.org"))
    settings.theme = .dark
    #expect(suite.value(forKey: "net_theme") == .string("dark"))
    settings.profile = Profile(name: "y", retries: 1)
    #expect(suite.value(forKey: "net_profile") == .dictionary(["name": .string("y"), "retries": .integer(1)]))
    settings.token = "t"
    #expect(suite.value(forKey: "net_token") == .string("t"))
    settings.token = nil
    #expect(suite.value(forKey: "net_token") == nil)
    settings.port = 1
    #expect(suite.value(forKey: "net_port") == .integer(1))
    writeOutside(suite, ["net_host": .string("outside")])
    #expect(await eventually { settings.host == "outside" })
}
