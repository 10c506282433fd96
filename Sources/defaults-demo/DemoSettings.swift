import Foundation
import ObservableDefaults
import Synchronization

/// The demo's settings object: three properties bound to keys of one suite, and a callback for every
/// change that reaches it, whoever made it.
///
/// This version is written by hand on ``DefaultsSuite/observe(keys:prefix:scope:_:)``; once the
/// `@ObservableDefaults` macro is available it becomes a plain annotated class observed with
/// Observation (see the README).
final class DemoSettings: Sendable {
    static let defaults: [String: DefaultsValue] = ["greeting": .string("hello"), "volume": .integer(5), "theme": .string("light")]

    let suite: DefaultsSuite
    private let observation = Mutex<DefaultsObservation?>(nil)

    init(suite: DefaultsSuite) {
        self.suite = suite
        suite.register(defaults: Self.defaults)
    }

    var greeting: String {
        get { suite.string(forKey: "greeting") ?? "hello" }
        set { suite.set(.string(newValue), forKey: "greeting") }
    }

    var volume: Int {
        get { suite.integer(forKey: "volume") }
        set { suite.set(.integer(newValue), forKey: "volume") }
    }

    var theme: String {
        get { suite.string(forKey: "theme") ?? "light" }
        set { suite.set(.string(newValue), forKey: "theme") }
    }

    /// Calls `handler` with each changed property's name and where the change came from, for changes
    /// made in this process, by other processes and by hand edits of the file.
    func onChange(_ handler: @escaping @Sendable (_ property: String, _ origin: DefaultsChangeOrigin) -> Void) {
        let token = suite.observe(keys: Set(Self.defaults.keys), scope: .allProcesses) { change in
            for key in change.keys.sorted() { handler(key, change.origin) }
        }
        observation.withLock { $0 = token }
    }

    /// The current value of a property, for display.
    func describe(_ property: String) -> String {
        switch property {
        case "greeting": "\"\(greeting)\""
        case "volume": String(volume)
        case "theme": "\"\(theme)\""
        default: "?"
        }
    }

    func stop() {
        observation.withLock { $0?.cancel() }
    }
}
