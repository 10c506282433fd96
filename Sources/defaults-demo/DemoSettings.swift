import Foundation
import ObservableDefaults

/// The demo's settings object: an ordinary `@ObservableDefaults` class, exactly as a user writes one.
///
/// Each property is stored under its name in the suite `observable-defaults-demo` (the demo passes a suite
/// in a temporary directory to the generated initializer) and is observable with the Observation framework.
/// `limitToInstance` is `false` by default on this platform, so changes from other processes and hand
/// edits of the file reach the object too.
@ObservableDefaults(suiteName: "observable-defaults-demo")
final class DemoSettings: Sendable {
    var greeting = "hello"
    var volume = 5
    var theme = "light"
}

extension DemoSettings {
    /// The properties the demo watches, with a way to read each for display.
    static let properties: [(name: String, read: @Sendable (DemoSettings) -> String)] = [
        ("greeting", { "\"\($0.greeting)\"" }),
        ("volume", { String($0.volume) }),
        ("theme", { "\"\($0.theme)\"" })
    ]

    /// The current value of a property, for display.
    func describe(_ property: String) -> String {
        Self.properties.first { $0.name == property }.map { $0.read(self) } ?? "?"
    }
}
