import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Error messages name types with the article a reader says: "a URL", not "an URL".
@Suite struct IndefiniteArticleTests {
    @Test(arguments: [
        ("Int", "an Int"), ("array", "an array"), ("integer", "an integer"), ("URL", "a URL"), ("UUID", "a UUID"),
        ("UInt8", "a UInt8"), ("NSNumber", "an NSNumber"), ("Limits", "a Limits"), ("dictionary", "a dictionary"),
        ("Date", "a Date"), ("Optional", "an Optional"), ("String", "a String")
    ])
    func articleFollowsTheSound(name: String, expected: String) {
        #expect(name.withIndefiniteArticle == expected)
    }

    @Test func aValueThatIsNoURLSaysSo() {
        #expect(_DefaultsMismatch.problem(.integer(5), expected: URL.self) == "5 is not a URL")
        #expect(_DefaultsMismatch.problem(.string("many"), expected: Int.self) == "\"many\" is not an Int")
    }
}
