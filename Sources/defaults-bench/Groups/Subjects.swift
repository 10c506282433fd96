import Foundation
import Observation

/// The enum of the property benchmarks (stored as its raw value).
enum BenchMode: String, Codable, Sendable {
    case fast, balanced, thorough
}

/// The Codable struct of the property benchmarks (stored as a nested structure by us, as JSON data by the
/// Apple library).
struct BenchEndpoint: Codable, Equatable, Sendable {
    var host: String
    var port: Int
    var secure: Bool

    static let sample = BenchEndpoint(host: "api.example.com", port: 8443, secure: true)
}

/// The baseline: the same four properties on a plain `@Observable` class, no persistence.
@Observable
final class PlainSettings {
    var name = "observable-defaults"
    var count = 42
    var mode = BenchMode.balanced
    var endpoint = BenchEndpoint.sample
}

/// The keys the property benchmarks use in suites and in `UserDefaults`.
enum BenchKeys {
    static let name = "name"
    static let count = "count"
    static let mode = "mode"
    static let endpoint = "endpoint"
}

/// A throw-away `UserDefaults` suite (swift-corelibs-foundation on Linux), removed when done.
final class ScratchUserDefaults {
    let suiteName: String
    let defaults: UserDefaults

    init(_ label: String) {
        suiteName = "defaults-bench.\(label).\(getpid())"
        guard let defaults = UserDefaults(suiteName: suiteName) else {
            fail("UserDefaults(suiteName: \(suiteName)) returned nil")
        }
        self.defaults = defaults
    }

    func remove() {
        defaults.removePersistentDomain(forName: suiteName)
    }
}
