@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

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

/// `@DefaultsKey` / `@DefaultsBacked` keys written as string literals in any form (escapes, raw, multi-line) are
/// the keys the compiler reads.
@Test func keysWrittenAsLiteralsAreUsed() async throws {
    let suite = try makeSuite()
    suite.set(.integer(7), forKey: "k.audio.volume")
    let model = LiteralKeys(userDefaults: suite)
    #expect(model.volume == 7)
    model.scale = 2
    model.theme = "dark"
    model.named = "m"
    model.multiLine = 3
    model.bare = 1
    model.bareParentheses = 2
    #expect(suite.value(forKey: #"k.ui\scale"#) == .double(2))
    #expect(suite.value(forKey: "k.ui.theme") == .string("dark"))
    #expect(suite.value(forKey: "k.named") == .string("m"))
    #expect(suite.value(forKey: "k.multi.line") == .integer(3))
    #expect(suite.value(forKey: "k.bare") == .integer(1))
    #expect(suite.value(forKey: "k.bareParentheses") == .integer(2))
    #expect(
        Set(suite.storedKeys) == [
            "k.audio.volume", #"k.ui\scale"#, "k.ui.theme", "k.named", "k.multi.line", "k.bare", "k.bareParentheses"
        ])
    let marker = OutsideMarker(suite)
    writeOutside(suite, ["k.audio.volume": .integer(9)])
    #expect(await marker.settle())
    #expect(model.volume == 9)
}
