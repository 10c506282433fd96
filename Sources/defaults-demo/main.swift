import Foundation
import ObservableDefaults

// `swift run defaults-demo`: no setup, no leftovers. The suite lives in a fresh temporary directory that is
// removed before exiting; the demo ends by itself in a few seconds (exit status 1 if a change got lost).

let directory = URL(fileURLWithPath: NSTemporaryDirectory())
    .appendingPathComponent("observable-defaults-demo-\(getpid())", isDirectory: true)

let succeeded: Bool
do {
    let suite = try DefaultsSuite(name: Demo.suiteName, directory: directory)
    succeeded = Demo(directory: directory, suite: suite, settings: DemoSettings(userDefaults: suite)).run()
} catch {
    say("defaults-demo: cannot open the demo suite: \(error)")
    succeeded = false
}
try? FileManager.default.removeItem(at: directory)
exit(succeeded ? 0 : 1)
