import Foundation
import ObservableDefaults

/// An object on the suite `late` (keys `late.level`, `late.count`) for `suite-start-without-descriptors`.
@ObservableDefaults(suiteName: "late", prefix: "late.")
final class LateSettings {
    var level = "info"
    var count = 0
}

/// `suite-start-without-descriptors`: the suite `late` in `$OBSERVABLE_DEFAULTS_DIRECTORY`, opened as ported
/// code does (`DefaultsSuite(suiteName:)!`, and by a `LateSettings` object) while no file descriptor is
/// left, so its file cannot be read at start. Prints "started level=… count=…" (the object's values then)
/// and "problem …" per current problem of the suite, sets `late.count` to 7 through the object, frees the
/// descriptors ("freed"), waits (≤ 20 s) until the object shows the file's `late.level`, and until the
/// suite has no pending change; prints "values level=… count=…" and exits. Exit 4: the file's value never
/// came; 5: the write did not land.
func runSuiteStartWithoutDescriptors() -> Never {
    let taken = takeEveryDescriptor()

    let suite = DefaultsSuite(suiteName: "late")!  // as ported code opens it
    let settings = LateSettings()
    emit("started level=\(settings.level) count=\(settings.count)")
    for problem in suite.currentErrors {
        emit("problem \(problem)" + (problem.errorNumber.map { " errno \($0)" } ?? ""))
    }
    settings.count = 7
    freeDescriptors(taken)
    emit("freed")
    guard waitUntil(seconds: 20, { settings.level != "info" }) else { exit(4) }
    guard waitUntil(seconds: 20, { !suite.hasPendingChanges }) else { exit(5) }
    emit("values level=\(settings.level) count=\(settings.count)")
    exit(0)
}
