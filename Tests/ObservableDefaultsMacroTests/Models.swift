import Foundation
import ObservableDefaults

enum Theme: String, Codable, Sendable {
    case light, dark, system
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var retries: Int
}

@ObservableDefaults(suiteName: "macro-tests.settings", prefix: "net_")
final class Settings: Sendable {
    var host = "localhost"
    @DefaultsKey(userDefaultsKey: "port") var port: Int = 8080
    var theme: Theme = .system
    var profile = Profile(name: "x", retries: 3)
    var token: String? = nil
    @ObservableOnly var connected = false
    @Ignore let cache: [String: Int] = [:]
}
