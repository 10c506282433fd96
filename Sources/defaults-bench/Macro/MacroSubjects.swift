import Foundation
import ObservableDefaults

/// The four benchmark properties on an `@ObservableDefaults` class (groups 1 and 2). Bound to a suite
/// file with `init(userDefaults:)`.
@ObservableDefaults
final class MacroSettings: Sendable {
    var name = "observable-defaults"
    var count = 42
    var mode = BenchMode.balanced
    var endpoint = BenchEndpoint.sample
}

/// The hand-edit benchmark's settings (group 5): the stamp plus the padding keys the editor writes.
@ObservableDefaults
final class HandEditSettings: Sendable {
    var stamp = 0
    var setting0 = "value 0"
    var setting1 = "value 1"
    var setting2 = "value 2"
    var setting3 = "value 3"
    var setting4 = "value 4"
    var setting5 = "value 5"
    var setting6 = "value 6"
    var setting7 = "value 7"
    var setting8 = "value 8"
    var setting9 = "value 9"
}

/// A generated fan-out class (see FanOutClasses.swift).
protocol FanOutObject: AnyObject, Sendable {
    init(
        userDefaults: DefaultsSuite?, ignoreExternalChanges: Bool?, prefix: String?,
        ignoredKeyPathsForExternalUpdates: [PartialKeyPath<Self>])
    /// The property whose key the benchmark changes on disk.
    var changed: Int { get }
}
