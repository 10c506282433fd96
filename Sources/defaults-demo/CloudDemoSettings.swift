import Foundation
import Observation
import ObservableDefaults

/// The cloud demo's settings object: an ordinary `@ObservableCloud` class, exactly as a user writes one.
///
/// Each machine of `defaults-demo cloud` holds one on its own `CloudKeyValueStore` (the generated
/// initializer's `store:` parameter); its properties are stored under `demo_` + their name in the namespace.
@ObservableCloud(prefix: "demo_", syncImmediately: true)
final class CloudDemoSettings: Sendable {
    var greeting = "hello"
    var volume = 5
    var theme = "light"
}

extension CloudDemoSettings {
    /// The properties the demo watches, with a way to read each for display.
    static let properties: [(name: String, read: @Sendable (CloudDemoSettings) -> String)] = [
        ("greeting", { "\"\($0.greeting)\"" }),
        ("volume", { String($0.volume) }),
        ("theme", { "\"\($0.theme)\"" })
    ]

    /// The current value of a property, for display.
    func describe(_ property: String) -> String {
        Self.properties.first { $0.name == property }.map { $0.read(self) } ?? "?"
    }

    /// Sets a property from its name and text (the second machine's `write` command).
    func set(_ property: String, to text: String) {
        switch property {
        case "greeting": greeting = text
        case "volume": volume = Int(text) ?? volume
        case "theme": theme = text
        default: break
        }
    }

    /// Observes each property with `withObservationTracking`, re-armed after each change: `changed` gets the
    /// property's name and the time, from Observation's `onChange` (before a write in this process stores
    /// its value; a change from elsewhere is already stored).
    func trackEachProperty(_ changed: @escaping @Sendable (_ property: String, _ time: Date) -> Void) {
        for property in Self.properties { track(property.name, property.read, changed) }
    }

    private func track(
        _ name: String, _ read: @escaping @Sendable (CloudDemoSettings) -> String,
        _ changed: @escaping @Sendable (String, Date) -> Void
    ) {
        withObservationTracking {
            _ = read(self)
        } onChange: { [weak self] in
            // Weak: the object (and its store) must go when the demo lets it go, which stops the store's
            // local copy before the demo removes its directory; a strong self here would keep it forever.
            changed(name, Date())
            guard let object = self else { return }
            DispatchQueue.global().async { object.track(name, read, changed) }
        }
    }
}
