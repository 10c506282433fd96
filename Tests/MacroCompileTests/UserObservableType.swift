// A module with its own type named `Observable` (RxSwift has one): the expansion must still add the
// `Observation.Observable` conformance. Compiling this target (`swift build --build-tests`) is the test.
import Foundation
import ObservableDefaults

enum Observable {}

@ObservableDefaults(suiteName: "compile-tests.user-observable")
final class ShadowedObservableSettings {
    var name = "n"
    @ObservableOnly var count = 0
}

/// Compiles only when the class conforms to Observation's `Observable`.
func requiresObservation<T: Observation.Observable>(_ value: T) -> T { value }

func useShadowedObservableSettings() {
    _ = requiresObservation(ShadowedObservableSettings(userDefaults: nil))
}
